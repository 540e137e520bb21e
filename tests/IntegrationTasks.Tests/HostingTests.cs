using TaskItem = Microsoft.Build.Utilities.TaskItem;

namespace IntegrationTasks.Tests;

/// <summary>Servers as real processes (`dotnet msbuild build.proj -t:TcpServer2`) and RunAll as a user runs it.</summary>
[TestClass]
[TestCategory("EndToEnd")]
public sealed class HostingTests
{
#if DEBUG
    internal const string Configuration = "Debug";
#else
    internal const string Configuration = "Release";
#endif

    public TestContext TestContext { get; set; } = null!;

    /// <summary>Every transport RunAll knows, as the build declares them (TransportDefinition items); RunAll runs them all when Transports is not set.</summary>
    internal static string[] AllTransports => [.. Definitions.Transports.Select(t => t["Identity"])];

    [TestMethod]
    public void The_transports_are_declared_by_their_families_targets_files()
    {
        // Not a hand-kept list: every family folder under targets/ contributes its own; the series' transports are all there.
        CollectionAssert.IsSubsetOf(new[]
        {
            "DirectCopy", "TcpClientSingleThreadTest", "TcpClientMultiThreadTest", "TcpClient2", "TcpClientMultiThreadTest3",
            "TcpClientMultiThreadTest4", "FileTransferRequest", "FileTransferBigRequest", "HttpRequest", "RabbitMQClientTest", "RabbitMQDurable",
        }, AllTransports);
        Assert.HasCount(AllTransports.Length, AllTransports.Distinct());
    }

    [TestMethod]
    public void A_family_name_in_Transports_selects_its_transports_and_an_unknown_name_lists_both_kinds()
    {
        var (exitCode, stdout, stderr) = RepositoryPaths.Run("dotnet", ["msbuild", RepositoryPaths.BuildProject, "-t:_SelectTransports",
            "-getItem:SelectedTransport", "-p:Transports=Grpc+TcpClient2", "-p:SkipTasksBuild=true", "-nologo"]);
        Assert.AreEqual(0, exitCode, stdout + stderr);
        using (var json = System.Text.Json.JsonDocument.Parse(stdout))
            CollectionAssert.AreEquivalent(new[] { "GrpcClient", "GrpcStreaming", "TcpClient2" },
                json.RootElement.GetProperty("Items").GetProperty("SelectedTransport").EnumerateArray().Select(i => i.GetProperty("Identity").GetString()).ToArray());
        (exitCode, stdout, stderr) = RepositoryPaths.Run("dotnet", ["msbuild", RepositoryPaths.BuildProject, "-t:_SelectTransports",
            "-p:Transports=Nope+Wcf", "-p:SkipTasksBuild=true", "-nologo", "-tl:off"]);
        Assert.AreNotEqual(0, exitCode);
        StringAssert.Contains(stdout, "error IT1001: Unknown transport(s) in Transports: Nope.");
        StringAssert.Contains(stdout, "Known: DirectCopy;");
        StringAssert.Contains(stdout, "or a family: Baseline;");
    }

    private static TaskItem Property(string name, string value)
    {
        var item = new TaskItem(name);
        item.SetMetadata("Value", value);
        return item;
    }

    private static StartServer Starter(FakeBuildEngine engine, string artifacts, string connString, int port) => new()
    {
        BuildEngine = engine,
        Name = "TcpServer2",
        Project = RepositoryPaths.BuildProject,
        Target = "TcpServer2",
        Port = port,
        ReadyTimeoutSeconds = 120,
        LogFile = Path.Combine(artifacts, "logs", "server.log"),
        Properties =
        [
            Property("Configuration", Configuration), Property("ArtifactsDir", artifacts + "/"),
            Property("ServerConnString", connString), Property("Port", port.ToString()),
        ],
    };

    [TestMethod]
    public async Task A_server_process_starts_serves_and_stops_leaving_nothing_behind()
    {
        await using var databases = await TransferChecks.WithRecordsAsync("Sqlite", 2000);
        using var artifacts = new TempDirectory("it-hosting-");
        var port = TestPorts.Free();
        var engine = new FakeBuildEngine();

        var start = Starter(engine, artifacts, databases.Server.ConnectionString, port);
        Assert.IsTrue(start.Execute(), engine.Log);
        Assert.AreEqual($"tcp://127.0.0.1:{port}", start.Endpoint);
        var pid = start.ProcessId;
        Assert.IsTrue(IsRunning(pid));

        var client = new TcpClient2
        {
            BuildEngine = engine, ClientConnString = databases.Client.ConnectionString, Port = port,
            TotalBatches = 10, BatchSize = 200, TimeoutSeconds = 120,
        };
        Assert.IsTrue(client.Execute(), engine.Log);
        await new TransferVerifier(databases.Server, databases.Client).VerifyAsync(2000, CancellationToken.None);

        var stop = new StopServer { BuildEngine = engine, Name = "TcpServer2" };
        Assert.IsTrue(stop.Execute(), engine.Log);
        Assert.AreEqual(0, stop.ExitCode);
        Assert.IsGreaterThan(0L, stop.PeakWorkingSetBytes);
        Assert.IsFalse(IsRunning(pid), "the server process is still running");
        AssertPortFree(port);
        StringAssert.Contains(File.ReadAllText(Path.Combine(artifacts, "logs", "server.log")), "TcpServer2 stopped");
    }

    [TestMethod]
    public async Task A_taken_port_is_a_clear_error()
    {
        await using var databases = TestDatabases.Sqlite();
        using var squatter = new TcpListener(IPAddress.Loopback, 0);
        squatter.Start();
        var port = ((IPEndPoint)squatter.LocalEndpoint).Port;
        var engine = new FakeBuildEngine();
        Assert.IsFalse(Starter(engine, Path.GetTempPath(), databases.Server.ConnectionString, port).Execute());
        Assert.IsTrue(engine.HasErrorCode(ErrorCodes.PortInUse), engine.Log);
    }

    [TestMethod]
    public async Task The_host_finds_its_modules_by_their_attribute_and_names_them_when_one_is_unknown()
    {
        using var host = System.Diagnostics.Process.Start(new System.Diagnostics.ProcessStartInfo("dotnet", [RunningHostModule.HostAssembly, "--module", "nope"])
        {
            RedirectStandardError = true, RedirectStandardOutput = true,
        })!;
        var error = await host.StandardError.ReadToEndAsync().WaitAsync(TimeSpan.FromSeconds(60));
        await host.WaitForExitAsync().WaitAsync(TimeSpan.FromSeconds(60));
        Assert.AreEqual(1, host.ExitCode, error);
        // Every module the host's sources declare, and nothing else: no list in the host names them, and none here either.
        var declared = Directory.GetFiles(Path.Combine(RepositoryPaths.Root, "tasks", "IntegrationTasks.Host"), "*.cs", SearchOption.AllDirectories)
            .Where(f => !f.Contains($"{Path.DirectorySeparatorChar}obj{Path.DirectorySeparatorChar}", StringComparison.Ordinal))
            .SelectMany(f => System.Text.RegularExpressions.Regex.Matches(File.ReadAllText(f), @"\[HostModule\(""(?<name>[\w-]+)""\)\]").Select(m => m.Groups["name"].Value))
            .Order(StringComparer.Ordinal).ToList();
        CollectionAssert.IsSubsetOf(new[] { "grpc", "records", "rest", "soap", "starvation", "websocket" }, declared);
        StringAssert.Contains(error, $"IT1001: Unknown module 'nope' (known: {string.Join(", ", declared)}).");
    }

    [TestMethod]
    public async Task A_server_that_dies_before_it_is_ready_is_reported_with_its_output()
    {
        var engine = new FakeBuildEngine();
        var start = Starter(engine, Path.GetTempPath(), "Data Source=/proc/forbidden/server.db", TestPorts.Free());
        Assert.IsFalse(start.Execute());
        Assert.IsTrue(engine.HasErrorCode(ErrorCodes.ServerExited), engine.Log);
        StringAssert.Contains(engine.Log, "IT1003");
        await Task.CompletedTask;
    }

    [TestMethod]
    public async Task The_end_of_a_failed_build_kills_a_server_that_was_never_stopped()
    {
        await using var databases = TestDatabases.Sqlite();
        var port = TestPorts.Free();
        var engine = new FakeBuildEngine();
        using var artifacts = new TempDirectory("it-hosting-");
        var start = Starter(engine, artifacts, databases.Server.ConnectionString, port);
        Assert.IsTrue(start.Execute(), engine.Log);
        engine.EndBuild(); // what MSBuild does with registered objects when a build ends, failed or not
        await WaitForExitAsync(start.ProcessId);
        AssertPortFree(port);
    }

    // A server of each kind: a TCP server task, the net.tcp framing server, a module of the ASP.NET Core host (the sweep starts
    // them as RunAll does, which starts every family in EveryTransportRunAllTests).
    [TestMethod]
    [DataRow("TcpClient2", "Port")]
    [DataRow("NetTcpSmallBatchesAsync", "NetTcpPort")]
    [DataRow("RestJson", "RestPort")]
    [DataRow("NatsJetStream", "NatsPort")] // a queue transport: its broker started around the sweep, and stopped
    public void FindBatchSize_sweeps_a_transport_and_reports_the_best_size(string transport, string portProperty)
    {
        using var artifacts = new TempDirectory("it-sweep-");
        var port = TestPorts.Free();
        var (exitCode, output) = RunBuild("FindBatchSize", artifacts, $"-p:{portProperty}={port}", $"-p:SweepTransport={transport}",
            "-p:SweepRecords=1000", "-p:BatchSizes=100+500", "-p:Repetitions=2", "-p:Warmup=false");
        Assert.AreEqual(0, exitCode, output);
        // Its own folder: a RunAll's results in results/ are kept.
        Assert.IsFalse(File.Exists(Path.Combine(artifacts, "results", "runs.jsonl")));
        StringAssert.Contains(output, $"results in {artifacts}/results/batch-size/");
        var markdown = File.ReadAllText(Path.Combine(artifacts, "results", "batch-size", "results.md"));
        StringAssert.Contains(markdown, $"## Batch-size sweep: {transport}, 1,000 records");
        var sweep = MarkdownTable.With(markdown, "Against the best");
        Assert.AreEqual(("10", "2"), (sweep.Cell("100", "Batches"), sweep.Cell("500", "Batches")));
        // Two repetitions: the faster size is named, not called best.
        StringAssert.Contains(markdown, "fastest mean (too few runs to call it best)");
        AssertEndedCleanly(artifacts);
        AssertPortFree(port);
    }

    [TestMethod]
    public void FindBatchSize_honours_a_network_profile_through_the_relay()
    {
        // Found by reading the targets: the sweep did not pass the transport's port property, so -p:Network (and -p:Fault) were ignored.
        using var artifacts = new TempDirectory("it-sweep-");
        var (exitCode, output) = RunBuild("FindBatchSize", artifacts, $"-p:Port={TestPorts.Free()}", $"-p:RelayPort={TestPorts.Free()}",
            "-p:SweepTransport=TcpClient2", "-p:SweepRecords=1000", "-p:BatchSizes=100+500", "-p:Repetitions=1", "-p:Warmup=false", "-p:Network=Lan2014");
        Assert.AreEqual(0, exitCode, output);
        var runs = IntegrationTasks.Transfer.MeasurementLog.Read(Path.Combine(artifacts, "results", "batch-size", "runs.jsonl"));
        Assert.HasCount(2, runs);
        Assert.IsTrue(runs.All(r => r is { Verified: true, ThroughRelay: true, LatencyMs: 0.2 }), string.Join("\n", runs));
        AssertEndedCleanly(artifacts);
    }

    [TestMethod]
    public void FindBatchSize_with_a_payload_leaves_out_the_sizes_over_BatchBytes()
    {
        // Found in a review: every size over BatchBytes ran at that bound, as the same batch size under several names.
        using var artifacts = new TempDirectory("it-sweep-");
        var (exitCode, output) = RunBuild("FindBatchSize", artifacts, $"-p:Port={TestPorts.Free()}", "-p:SweepTransport=TcpClient2",
            "-p:SweepRecords=1000", "-p:BatchSizes=100+500", "-p:PayloadBytes=2048", "-p:BatchBytes=204800", "-p:Repetitions=1", "-p:Warmup=false");
        Assert.AreEqual(0, exitCode, output);
        var runs = IntegrationTasks.Transfer.MeasurementLog.Read(Path.Combine(artifacts, "results", "batch-size", "runs.jsonl"));
        Assert.HasCount(1, runs);
        Assert.IsTrue(runs.All(r => r is { Verified: true, BatchSize: 100, PayloadBytes: 2048, Records: 1000 }), string.Join("\n", runs));
        AssertEndedCleanly(artifacts);
    }

    [TestMethod]
    public void A_failing_client_still_stops_the_server_and_fails_the_build()
    {
        using var artifacts = new TempDirectory("it-runall-");
        var port = TestPorts.Free();
        var (exitCode, output) = RunBuild("RunAll", artifacts,
            $"-p:Port={port}", "-p:RecordCounts=1000", "-p:Repetitions=1", "-p:Transports=TcpClient2", "-p:MaxInFlight=0");
        Assert.AreNotEqual(0, exitCode, output);
        StringAssert.Contains(output, "IT1001");
        StringAssert.Contains(output, "TcpServer2 stopped");
        AssertEndedCleanly(artifacts);
        AssertPortFree(port);
    }

    [TestMethod]
    public void The_series_target_names_and_a_standalone_client_run_work()
    {
        using var artifacts = new TempDirectory("it-standalone-");
        var (exitCode, output) = RunBuild("GenerateData", artifacts, "-p:Records=500");
        Assert.AreEqual(0, exitCode, output);
        (exitCode, output) = RunBuild("DirectCopy", artifacts, "-p:TotalBatches=5", "-p:BatchSize=100");
        Assert.AreEqual(0, exitCode, output);
        StringAssert.Contains(output, "Verified: ClientTable equals ServiceTable for all 500 IDs.");
        // No server: the series' client target name fails clearly instead of hanging.
        (exitCode, output) = RunBuild("TcpClientMultiThreadTest2", artifacts, $"-p:Port={TestPorts.Free()}", "-p:TotalBatches=5", "-p:BatchSize=100");
        Assert.AreNotEqual(0, exitCode);
        StringAssert.Contains(output, "IT3003");
    }

    [TestMethod]
    [Timeout(300_000, CooperativeCancellation = true)]
    public async Task Client_runs_started_at_once_from_one_checkout_each_keep_their_own_figures_and_leave_none_behind()
    {
        // Before: every run of a checkout wrote, rewrote and read artifacts/last-run.json, and some of 16 runs at once failed with IT5001.
        using var artifacts = new TempDirectory("it-handruns-");
        var (exitCode, output) = RunBuild("GenerateData", artifacts, "-p:Records=2000");
        Assert.AreEqual(0, exitCode, output);
        var runs = await Task.WhenAll(Enumerable.Range(1, 6).Select(k => Task.Run(() => RunBuild("DirectCopy", artifacts, "-p:TotalBatches=20", "-p:BatchSize=100",
            $"-p:ClientConnString=Data Source={artifacts}/data/client{k}.db"))));
        foreach (var (code, log) in runs)
        {
            Assert.AreEqual(0, code, log);
            StringAssert.Contains(log, "ClientTable equals ServiceTable for all 2,000 IDs.");
        }
        var left = Directory.Exists(Path.Combine(artifacts, "runs")) ? Directory.GetFiles(Path.Combine(artifacts, "runs")) : [];
        Assert.IsEmpty(left, "a run by hand removes its run file and its verification: " + string.Join(", ", left));
    }

    [TestMethod]
    public void The_SQL_Server_provider_loads_inside_MSBuild_and_fails_clearly_without_a_server()
    {
        // No SQL Server can run here: this shows the driver's Linux build loads through the task's
        // .deps.json and that a connection failure is a coded error with the password kept out of the log.
        using var artifacts = new TempDirectory("it-sqlserver-");
        var (exitCode, output) = RunBuild("GenerateData", artifacts, "-p:Provider=SqlServer",
            "-p:ConnString=Server=127.0.0.1%2C1%3BDatabase=IntegrationTests%3BUser Id=sa%3BPassword=secret%3BConnect Timeout=3%3BEncrypt=false");
        Assert.AreNotEqual(0, exitCode, output);
        StringAssert.Contains(output, "error IT1003: Cannot open the SqlServer database");
        Assert.DoesNotContain("PlatformNotSupported", output);
        Assert.DoesNotContain("secret", output);
    }

    internal static (int ExitCode, string Output) RunBuild(string target, string artifacts, params string[] properties)
    {
        var (exitCode, stdout, stderr) = RepositoryPaths.Run("dotnet", TestBuild.Arguments(target, artifacts, ["-v:n", .. properties]));
        var output = stdout + stderr;
        // A failed build's errors and coded warnings first: a long output is often cut where a log shows only its start.
        if (exitCode != 0)
            output = "Errors and coded warnings (the whole output follows):\n" +
                     string.Join("\n", output.Split('\n').Where(l => l.Contains(": error ", StringComparison.Ordinal) || l.Contains(": warning IT", StringComparison.Ordinal))) +
                     "\n---\n" + output;
        return (exitCode, output);
    }

    private static bool IsRunning(int pid)
    {
        try
        {
            using var process = Process.GetProcessById(pid);
            return !process.HasExited;
        }
        catch (ArgumentException)
        {
            return false;
        }
    }

    private static Task WaitForExitAsync(int pid) => Eventually.WaitUntilAsync(() => !IsRunning(pid), $"process {pid} to exit");

    internal static void AssertPortFree(int port)
    {
        using var listener = new TcpListener(IPAddress.Loopback, port);
        listener.Start(); // throws if anything still listens
        listener.Stop();
    }

    /// <summary>No process left whose command line names this test's artifacts folder (servers get it as a property).</summary>
    [TestMethod]
    public async Task A_server_armed_to_restart_comes_back_after_a_kill_and_stops_for_good_when_stopped()
    {
        using var directory = new TempDirectory("it-restart-");
        var pidFile = Path.Combine(directory, "server.pid");
        // A stand-in server: says it is ready, then serves until its input closes (as the suite's servers do).
        var launch = new IntegrationTasks.Hosting.ServerLaunch("/bin/sh",
            ["-c", $"echo '{IntegrationTasks.Hosting.ServerSignals.ReadyMarker} tcp://x:1'; cat >/dev/null; echo '{directory.Path}' >/dev/null"], directory);
        using var server = IntegrationTasks.Hosting.ServerProcess.Start("Stand-in", launch, Path.Combine(directory, "server.log"), sink: null);
        await server.WaitReadyAsync(TimeSpan.FromSeconds(10), CancellationToken.None);
        server.PidFile = pidFile;
        server.RestartOnExit = true;
        var first = server.ProcessId;
        Assert.AreEqual(first.ToString(), File.ReadAllText(pidFile));

        System.Diagnostics.Process.GetProcessById(first).Kill(); // what the relay's KillServer does
        await Eventually.WaitUntilAsync(() => server.Restarts > 0 && File.ReadAllText(pidFile) != first.ToString(), "the killed stand-in to be restarted",
            seen: server.RecentOutput);
        await server.WaitReadyAsync(TimeSpan.FromSeconds(10), CancellationToken.None);
        Assert.AreNotEqual(first, server.ProcessId);
        Assert.IsFalse(server.HasExited);
        StringAssert.Contains(server.RecentOutput(), "warning IT4012: Stand-in exited");

        // Stopped on purpose, it stays stopped.
        Assert.AreEqual(0, await server.StopAsync(TimeSpan.FromSeconds(10), CancellationToken.None));
        await Task.Delay(300);
        Assert.AreEqual(1, server.Restarts);
        AssertEndedCleanly(directory);
    }

    /// <summary>A build's end: no process it started outlived it, and its servers told every problem with a code.</summary>
    internal static void AssertEndedCleanly(string artifacts)
    {
        ServerLogs.AssertEveryProblemCodedIn(artifacts);
        foreach (var dir in Directory.EnumerateDirectories("/proc").Where(d => int.TryParse(Path.GetFileName(d), out _)))
        {
            string cmdline;
            try { cmdline = File.ReadAllText(Path.Combine(dir, "cmdline")).Replace('\0', ' '); }
            catch (IOException) { continue; }
            catch (UnauthorizedAccessException) { continue; }
            Assert.DoesNotContain(artifacts, cmdline, $"process {Path.GetFileName(dir)} outlived the build: {cmdline}");
        }
    }
}
