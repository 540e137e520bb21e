using Microsoft.Build.Framework;

namespace IntegrationTasks.Tests;

/// <summary>A client run's own process, in parts: its event lines, its build engine, its warm-up, the host's client mode, the build's side.</summary>
[TestClass]
[TestCategory("Unit")]
[DoNotParallelize] // the host's client mode sets this process's client context and takes its SIGINT and SIGTERM for a moment
public sealed class ClientProcessTests
{
    [TestMethod]
    public void An_event_line_round_trips_and_any_other_line_is_a_message()
    {
        foreach (var line in new[]
                 {
                     TaskEventLine.Error("IT3004", "late {0} \"quoted\"\nsecond line"), TaskEventLine.Warning(null, "w"),
                     TaskEventLine.Message("m", MessageImportance.Low), TaskEventLine.Result(true),
                 })
            Assert.AreEqual(line, TaskEventLine.Parse(line.ToLine()));
        Assert.AreEqual(TaskEventLine.Message("Unhandled exception. {", MessageImportance.Normal), TaskEventLine.Parse("Unhandled exception. {"));
        Assert.AreEqual(TaskEventLine.Message("{not json", MessageImportance.Normal), TaskEventLine.Parse("{not json"));
    }

    private sealed class Logging : Microsoft.Build.Utilities.Task
    {
        public override bool Execute()
        {
            Log.LogError(null, "IT3006", null, null, 0, 0, 0, 0, "lost after {0:N0} records", 12345);
            Log.LogWarning(null, "IT4014", null, null, 0, 0, 0, 0, "not injected");
            Log.LogMessage(MessageImportance.High, "{0:F3} s", 0.4820963);
            return false;
        }
    }

    private static List<TaskEventLine> Lines(StringWriter output) =>
        [.. output.ToString().Split('\n', StringSplitOptions.RemoveEmptyEntries).Select(TaskEventLine.Parse)];

    [TestMethod]
    public void The_engine_writes_each_event_formatted_with_its_code_and_importance_and_a_quiet_one_lowers_only_messages()
    {
        var output = new StringWriter();
        var globals = new Dictionary<string, string> { ["RunAllStartedAt"] = "t" };
        var engine = new LineBuildEngine(output, globals, "/p/build.proj");
        Assert.IsFalse(new Logging { BuildEngine = engine }.Execute());
        engine.Quiet = true;
        new Logging { BuildEngine = engine }.Execute();
        var expected = new[]
        {
            TaskEventLine.Error("IT3006", "lost after 12,345 records"), TaskEventLine.Warning("IT4014", "not injected"), TaskEventLine.Message("0.482 s", MessageImportance.High),
            TaskEventLine.Error("IT3006", "lost after 12,345 records"), TaskEventLine.Warning("IT4014", "not injected"), TaskEventLine.Message("0.482 s", MessageImportance.Low),
        };
        CollectionAssert.AreEqual(expected, Lines(output));
        Assert.AreSame(globals, engine.GetGlobalProperties());
        Assert.AreEqual("/p/build.proj", engine.ProjectFileOfTaskNode);
    }

    private static ClientRunRequest Request(ClientProcessMode mode, params (string Name, string Value)[] shared) =>
        new("TcpClient2", [], shared.ToDictionary(p => p.Name, p => p.Value), [], "", mode, 5);

    [TestMethod]
    public void A_warm_up_is_the_runs_first_batches_one_a_client_with_no_figures_and_none_under_a_fault()
    {
        var run = Request(ClientProcessMode.Warmed, ("TotalBatches", "50"), ("Clients", "8"), ("ResultFile", "/a/run.json"), ("StartAt", "2026-12-06T10:00:00Z"), ("Fault", "None"));
        var warmup = run.WarmupShared();
        Assert.AreEqual(("8", "", "", "8"), (warmup["TotalBatches"], warmup["ResultFile"], warmup["StartAt"], warmup["Clients"]));
        Assert.AreEqual("3", Request(ClientProcessMode.Warmed, ("TotalBatches", "3")).WarmupShared()["TotalBatches"]);
        Assert.AreEqual("5", Request(ClientProcessMode.Warmed, ("TotalBatches", "50")).WarmupShared()["TotalBatches"]);
        Assert.IsTrue(run.Warms);
        Assert.IsTrue(Request(ClientProcessMode.Warmed, ("Fault", "")).Warms);
        Assert.IsFalse(Request(ClientProcessMode.Warmed, ("Fault", "Reset")).Warms);
        Assert.IsFalse(Request(ClientProcessMode.Fresh).Warms);
    }

    /// <summary>The host's input as the build holds it: a request, then open until the run's result is out, then closed.</summary>
    private sealed class BuildSide(string request) : TextReader
    {
        private readonly TaskCompletionSource _resultOut = new(TaskCreationOptions.RunContinuationsAsynchronously);
        private bool _sent;

        public TextWriter Output { get; } = new Watcher();

        public override Task<string?> ReadLineAsync()
        {
            if (_sent)
                return _resultOut.Task.ContinueWith(_ => (string?)null, TaskScheduler.Default);
            _sent = true;
            return Task.FromResult<string?>(request);
        }

        public IReadOnlyList<TaskEventLine> Lines => ((Watcher)Output).Lines;

        private sealed class Watcher : StringWriter
        {
            public List<TaskEventLine> Lines { get; } = [];
            public TaskCompletionSource? ResultOut { get; set; }

            public override void WriteLine(string? value)
            {
                var line = TaskEventLine.Parse(value ?? "");
                lock (Lines)
                    Lines.Add(line);
                if (line.Kind == TaskEventKind.Result)
                    ResultOut?.TrySetResult();
            }
        }

        public BuildSide Armed()
        {
            ((Watcher)Output).ResultOut = _resultOut;
            return this;
        }
    }

    [TestMethod]
    public async Task The_host_runs_the_requested_task_in_its_process_and_reports_its_coded_error_and_result()
    {
        var build = new BuildSide((Request(ClientProcessMode.Transport) with { TaskName = "NoSuchClient" }).ToJson()).Armed();
        try
        {
            Assert.AreEqual(0, await ClientHost.RunAsync(build, build.Output).WaitAsync(TimeSpan.FromSeconds(30)));
        }
        finally
        {
            ClientProcessContext.Mode = ClientProcessMode.Build;
            ClientProcessContext.StartSeconds = null;
            ClientProcessContext.RunsBefore = null;
        }
        Assert.AreEqual((TaskEventKind.Error, "IT1001"), (build.Lines[0].Kind, build.Lines[0].Code));
        Assert.AreEqual(TaskEventLine.Result(false), build.Lines[^1]);
    }

    [TestMethod]
    public async Task A_host_given_no_request_says_so_with_a_code_and_exits_non_zero()
    {
        var build = new BuildSide("not a request").Armed();
        Assert.AreEqual(2, await ClientHost.RunAsync(build, build.Output).WaitAsync(TimeSpan.FromSeconds(30)));
        CollectionAssert.AreEqual(new[] { (TaskEventKind.Error, "IT1001"), (TaskEventKind.Result, (string?)null) },
            build.Lines.Select(l => (l.Kind, l.Code)).ToArray());
    }

    [TestMethod]
    public void A_client_process_mode_that_is_none_is_IT1001_and_a_missing_host_IT4016()
    {
        var engine = new FakeBuildEngine();
        Assert.IsFalse(new RunTransferClient { BuildEngine = engine, TaskName = "TcpClient2", ClientProcess = "Sideways" }.Execute());
        Assert.IsTrue(engine.HasErrorCode(ErrorCodes.InvalidParameter), engine.Log);
        engine = new FakeBuildEngine();
        Assert.IsFalse(new RunTransferClient { BuildEngine = engine, TaskName = "TcpClient2", ClientProcess = "Fresh", ClientHostAssembly = "/nowhere/IntegrationTasks.Host.dll" }.Execute());
        Assert.IsTrue(engine.HasErrorCode(ErrorCodes.ClientProcessFailed), engine.Log);
    }

    [TestMethod]
    public void The_report_charts_client_memory_only_where_each_client_had_a_process_of_its_own()
    {
        Measurement Run(string transport, int repetition, long peak, string? process) =>
            ResultsTests.Run(transport, 1000, 1.0 + repetition / 10.0, repetition) with { ClientPeakBytes = peak, ClientProcess = process };
        string Html(string? process)
        {
            using var folder = new TempDirectory("it-client-chart-");
            IntegrationTasks.Exporters.ReportFiles.Write(folder, [Run("TcpClient2", 1, 100L << 20, process), Run("TcpClient2", 2, 110L << 20, process),
                Run("GrpcClient", 1, 300L << 20, process), Run("GrpcClient", 2, 320L << 20, process)], new Dictionary<string, string>(), new ReportOptions());
            return File.ReadAllText(Path.Combine(folder, "report.html"));
        }
        StringAssert.Contains(Html("Transport"), "id=\"client-memory-");
        StringAssert.Contains(Html("Fresh"), "id=\"client-memory-");
        Assert.DoesNotContain("id=\"client-memory-", Html(null), "a client in the build's process has the build's peak");
        Assert.DoesNotContain("id=\"client-memory-", Html("Build"));
    }
}
