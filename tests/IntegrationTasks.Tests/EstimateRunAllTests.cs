
namespace IntegrationTasks.Tests;

[TestClass]
[TestCategory("Unit")]
public sealed class EstimateRunAllTests
{
    [TestMethod]
    public void An_earlier_run_here_gives_the_plan_its_time_scaled_to_the_record_counts()
    {
        using var folder = new TempDirectory("it-estimate-");
        var measurements = Enumerable.Range(1, 3).SelectMany(r => new[]
        {
            new IntegrationTasks.Transfer.Measurement { Transport = "TcpClient2", Records = 20_000, Repetition = r, ElapsedSeconds = 2.0, Verified = true },
            new IntegrationTasks.Transfer.Measurement { Transport = "GrpcClient", Records = 20_000, Repetition = r, ElapsedSeconds = 1.0, Verified = true },
        }).ToList();
        IntegrationTasks.Results.ReportWriter.Write(folder, measurements, new Dictionary<string, string>());
        var results = Directory.GetFiles(folder, "results-*.json").Single();
        // TcpClient2 at 20,000 and 40,000 (scaled from 20,000: 4 s), 2 runs each; HttpRequest never measured there.
        var estimate = IntegrationTasks.Results.EstimateRunAll.Estimate([("TcpClient2", [20_000, 40_000]), ("HttpRequest", [20_000])], runsEach: 2, results);
        Assert.AreEqual((TimeSpan.FromSeconds((2.0 + 4.0) * 2), 1), estimate);
        Assert.IsNull(IntegrationTasks.Results.EstimateRunAll.Estimate([("HttpRequest", [20_000])], 2, results));
    }

    [TestMethod]
    public void Several_client_counts_multiply_the_planned_runs_and_the_peer_runs_at_one()
    {
        using var folder = new TempDirectory("it-estimate-");
        var engine = new FakeBuildEngine();
        var peer = new Microsoft.Build.Utilities.TaskItem("Peer: SQLite ATTACH");
        peer.SetMetadata("RecordCounts", "2000");
        peer.SetMetadata("OneClient", "true");
        var tcp = new Microsoft.Build.Utilities.TaskItem("TcpClient2");
        tcp.SetMetadata("RecordCounts", "2000+200");
        // -p:Clients=1+2+4, batches of 100: TcpClient2 at 2,000 records runs at 1, 2 and 4 clients, at 200 (2 batches) at 1 and 2; the peer once.
        Assert.IsTrue(new IntegrationTasks.Results.EstimateRunAll
        {
            BuildEngine = engine, Transports = [peer, tcp], Repetitions = 2, Warmup = true, ResultsDirectory = folder, ClientCounts = ["1+2+4"], BatchSize = 100,
        }.Execute(), engine.Log);
        StringAssert.Contains(engine.Log, "RunAll plan: 18 runs moving 25,200 records in all");
        CollectionAssert.AreEqual(new[] { 2000, 2000, 2000, 200, 200 }, IntegrationTasks.Results.EstimateRunAll.AtClientCounts([2000, 200], [1, 2, 4], 100));
    }
}
