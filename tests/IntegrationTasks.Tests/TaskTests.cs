using IntegrationTasks.Common;
using IntegrationTasks.Data;
using IntegrationTasks.Results;
using TaskItem = Microsoft.Build.Utilities.TaskItem;

namespace IntegrationTasks.Tests;

/// <summary>The data tasks through a fake build engine: outputs on success, coded errors and false on failure.</summary>
[TestClass]
public sealed class DataTaskTests
{
    [TestMethod]
    public async Task Generate_empty_and_verify_as_tasks()
    {
        await using var databases = TestDatabases.Sqlite();
        var engine = new FakeBuildEngine();
        var generate = new DataGeneration { BuildEngine = engine, ServerConnString = databases.Server.ConnectionString, Records = 300 };
        Assert.IsTrue(generate.Execute(), engine.Log);
        Assert.AreEqual(300, generate.Inserted);

        var copy = new Baseline.DirectCopy
        {
            BuildEngine = engine, ServerConnString = databases.Server.ConnectionString,
            ClientConnString = databases.Client.ConnectionString, TotalBatches = 3, BatchSize = 100,
        };
        Assert.IsTrue(copy.Execute(), engine.Log);
        Assert.AreEqual(300, copy.Records);

        var verify = new VerifyTransfer
        {
            BuildEngine = engine, ServerConnString = databases.Server.ConnectionString,
            ClientConnString = databases.Client.ConnectionString, Records = 300,
        };
        Assert.IsTrue(verify.Execute(), engine.Log);
        Assert.AreEqual(300, verify.Matched);

        var empty = new EmptyClientTable { BuildEngine = engine, ClientConnString = databases.Client.ConnectionString };
        Assert.IsTrue(empty.Execute(), engine.Log);
        Assert.AreEqual(0, await databases.Client.CountAsync(RecordTable.Client, CancellationToken.None));

        // Now the client is empty: verification fails the build with IT3001 and names the loss.
        engine = new FakeBuildEngine();
        verify.BuildEngine = engine;
        Assert.IsFalse(verify.Execute());
        Assert.IsTrue(engine.HasErrorCode(ErrorCodes.VerificationFailed), engine.Log);
        StringAssert.Contains(engine.Log, "300 missing (first: 1, 2, 3");
    }

    [TestMethod]
    [DataRow("Oracle", "Data Source=x", ErrorCodes.UnknownProvider)]
    [DataRow("Sqlite", "", ErrorCodes.InvalidParameter)]
    [DataRow("Sqlite", "Data Source=/proc/none/x.db", ErrorCodes.DatabaseFailure)]
    [DataRow("PostgreSql", "Host=127.0.0.1;Port=1;Timeout=2", ErrorCodes.DatabaseFailure)]
    [DataRow("PostgreSql", "this is not a connection string", ErrorCodes.InvalidParameter)]
    public void Bad_databases_are_coded_errors(string provider, string connString, string code)
    {
        var engine = new FakeBuildEngine();
        var task = new DataGeneration { BuildEngine = engine, ServerProvider = provider, ServerConnString = connString, Records = 10 };
        Assert.IsFalse(task.Execute());
        Assert.IsTrue(engine.HasErrorCode(code), engine.Log);
    }

    [TestMethod]
    public void Cancelling_a_task_ends_it_quickly_and_returns_false()
    {
        using var databases = new DisposableSqlite();
        using var silent = SilentServer();
        var client = ClientOf(silent, databases, new FakeBuildEngine(), timeoutSeconds: 1800);
        var run = System.Threading.Tasks.Task.Run(client.Execute);
        Thread.Sleep(500);
        client.Cancel();
        Assert.IsTrue(run.Wait(TimeSpan.FromSeconds(10)), "Execute did not return after Cancel");
        Assert.IsFalse(run.Result);
    }

    [TestMethod]
    public void A_transfer_that_exceeds_its_timeout_fails_with_IT3004()
    {
        using var databases = new DisposableSqlite();
        using var silent = SilentServer();
        var engine = new FakeBuildEngine();
        Assert.IsFalse(ClientOf(silent, databases, engine, timeoutSeconds: 1).Execute());
        Assert.IsTrue(engine.HasErrorCode(ErrorCodes.Timeout), engine.Log);
    }

    /// <summary>A server that accepts connections and never answers: only a timeout or cancellation ends a client.</summary>
    private static System.Net.Sockets.TcpListener SilentServer()
    {
        var listener = new System.Net.Sockets.TcpListener(System.Net.IPAddress.Loopback, 0);
        listener.Start();
        return listener;
    }

    private static Tcp.TcpClient2 ClientOf(System.Net.Sockets.TcpListener server, DisposableSqlite databases, FakeBuildEngine engine, int timeoutSeconds) => new()
    {
        BuildEngine = engine, ClientConnString = databases.Value.Client.ConnectionString,
        Port = ((System.Net.IPEndPoint)server.LocalEndpoint).Port, TotalBatches = 1, BatchSize = 1, TimeoutSeconds = timeoutSeconds,
    };
}

[TestClass]
public sealed class ResultsTests
{
    [TestMethod]
    public void Statistics_match_hand_computed_values()
    {
        // 2, 4, 4, 4, 5, 5, 7, 9: mean 5, sample variance 32/7. Records/s in the report is the mean of each run's rate.
        var s = Summary.Of([2.0, 4, 4, 4, 5, 5, 7, 9]);
        Assert.AreEqual(8, s.Count);
        Assert.AreEqual(5.0, s.Mean, 1e-12);
        Assert.AreEqual(4.5, s.Median, 1e-12);
        Assert.AreEqual(Math.Sqrt(32.0 / 7), s.StdDev, 1e-12);
        Assert.AreEqual(2.0, s.Min);
        Assert.AreEqual(9.0, s.Max);

        var odd = Summary.Of([3.0, 1, 2]);
        Assert.AreEqual(2.0, odd.Median);
        Assert.AreEqual(1.0, odd.StdDev, 1e-12);
        Assert.AreEqual(0.0, Summary.Of([4.2]).StdDev);
    }

    private static Measurement Run(string transport, int records, double seconds, int repetition) => new()
    {
        Transport = transport, Records = records, ElapsedSeconds = seconds, Repetition = repetition, BatchSize = 1000,
        BytesSent = records * 10L, BytesReceived = records * 290L, ClientPeakBytes = 100L << 20, Verified = true,
    };

    [TestMethod]
    public void The_report_ranks_transports_against_the_fastest_and_DirectCopy()
    {
        Measurement[] runs =
        [
            Run("DirectCopy", 1000, 1.0, 1), Run("DirectCopy", 1000, 3.0, 2),
            Run("TcpClient2", 1000, 3.0, 1), Run("TcpClient2", 1000, 5.0, 2),
            Run("TcpClient2", 2000, 8.0, 1),
        ];
        var rows = ReportWriter.Summarise(runs);
        var tcp = rows.Single(r => r.Transport == "TcpClient2" && r.Records == 1000);
        Assert.AreEqual(4.0, tcp.Seconds.Mean);
        Assert.AreEqual(2.0, tcp.RatioToBaseline!.Value, 1e-12);
        Assert.AreEqual(100.0, tcp.PercentSlowerThanFastest, 1e-9);
        Assert.AreEqual(2.0, tcp.SecondsBehindFastest, 1e-12);
        Assert.AreEqual(300.0, tcp.MeanBytesPerRecord, 1e-12);
        Assert.IsNull(rows.Single(r => r.Records == 2000).RatioToBaseline, "no baseline at 2000 records");

        var folder = Directory.CreateTempSubdirectory("it-report-").FullName;
        var files = ReportWriter.Write(folder, runs, new Dictionary<string, string> { ["Provider"] = "Sqlite" });
        Assert.HasCount(3, files);
        var markdown = File.ReadAllText(Path.Combine(folder, "results.md"));
        StringAssert.Contains(markdown, "| DirectCopy | 2.000 |  |  | 2.000 | 1.414 | 1.000 | 3.000 | 667 | 1.00 | 300 | 100 | – |");
        StringAssert.Contains(markdown, "| TcpClient2 | 4.000 | 100.00 | 2.000 | 4.000 | 1.414 | 3.000 | 5.000 | 267 | 2.00 | 300 | 100 | – |");
        StringAssert.Contains(markdown, "355.43");
        var csv = File.ReadAllLines(Path.Combine(folder, "results.csv"));
        Assert.HasCount(6, csv);
        StringAssert.StartsWith(csv[1], "DirectCopy,,1000,1000,1,1,1000,");
    }

    [TestMethod]
    public void Measurements_round_trip_through_the_results_log()
    {
        var path = Path.Combine(Directory.CreateTempSubdirectory("it-log-").FullName, "runs.jsonl");
        var run = Run("TcpClient2", 1000, 0.1 + 0.2, 1) with { ServerPeakBytes = 12345 };
        MeasurementLog.Append(path, run);
        MeasurementLog.Append(path, run with { Repetition = 2 });
        var back = MeasurementLog.Read(path);
        Assert.HasCount(2, back);
        Assert.AreEqual(run, back[0]);
        File.AppendAllText(path, "{not json\n");
        var e = Assert.ThrowsExactly<IntegrationException>(() => MeasurementLog.Read(path));
        Assert.AreEqual(ErrorCodes.ResultsUnreadable, e.Code);
    }

    [TestMethod]
    public void PlanRuns_expands_sizes_times_repetitions_and_refuses_bad_sizes()
    {
        var engine = new FakeBuildEngine();
        var plan = new PlanRuns { BuildEngine = engine, RecordCounts = ["2000+3000", "1000"], BatchSize = 1000, Repetitions = 2 };
        Assert.IsTrue(plan.Execute(), engine.Log);
        Assert.HasCount(6, plan.Runs);
        Assert.AreEqual(3000, plan.MaxRecords);
        Assert.AreEqual("3", plan.Runs[2].GetMetadata("TotalBatches"));
        Assert.AreEqual("1", plan.Runs[2].GetMetadata("Repetition"));

        plan = new PlanRuns { BuildEngine = engine, RecordCounts = ["1500"], BatchSize = 1000, Repetitions = 2 };
        Assert.IsFalse(plan.Execute());
        Assert.IsTrue(engine.HasErrorCode(ErrorCodes.InvalidParameter));
    }

    [TestMethod]
    public void WriteReport_task_writes_the_files_and_prints_a_summary()
    {
        var folder = Directory.CreateTempSubdirectory("it-report-").FullName;
        var log = Path.Combine(folder, "runs.jsonl");
        MeasurementLog.Append(log, Run("DirectCopy", 1000, 1.0, 1));
        MeasurementLog.Append(log, Run("TcpClient2", 1000, 1.5, 1));
        var engine = new FakeBuildEngine();
        var property = new TaskItem("Provider");
        property.SetMetadata("Value", "Sqlite");
        var task = new WriteReport { BuildEngine = engine, ResultsFile = log, OutputDirectory = folder, RunProperties = [property] };
        Assert.IsTrue(task.Execute(), engine.Log);
        Assert.HasCount(3, task.Files);
        StringAssert.Contains(engine.Log, "1.50× DirectCopy");
        StringAssert.Contains(File.ReadAllText(Path.Combine(folder, "results.md")), "- Provider: Sqlite");
    }
}
