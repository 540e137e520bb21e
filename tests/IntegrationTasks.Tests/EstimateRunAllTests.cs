namespace IntegrationTasks.Tests;

[TestClass]
[TestCategory("Unit")]
public sealed class EstimateRunAllTests
{
    [TestMethod]
    public void An_earlier_run_here_gives_a_transport_its_measured_time_and_the_others_keep_their_prior()
    {
        using var folder = new TempDirectory("it-estimate-");
        var measurements = Enumerable.Range(1, 3).Select(r =>
            new IntegrationTasks.Transfer.Measurement { Transport = "TcpClient2", Records = 20_000, Repetition = r, ElapsedSeconds = 2.0, Verified = true }).ToList();
        IntegrationTasks.Exporters.ReportFiles.Write(Path.Combine(folder, "results"), measurements, new Dictionary<string, string>());
        var measured = EstimateRunAll.MeanSeconds(Directory.GetFiles(Path.Combine(folder, "history"), "results-*.json").Single());
        var http = new Microsoft.Build.Utilities.TaskItem("HttpRequest");
        http.SetMetadata(nameof(TransportDefinition.PriorMicrosecondsPerRecord), "50");
        // TcpClient2 at 20,000 (measured: 2 s) and 40,000 (scaled from 20,000: 4 s), each with what a run adds around its transfer;
        // HttpRequest never measured there: its prior, 50 µs a record.
        var (seconds, known) = EstimateRunAll.Estimate([("TcpClient2", [new(20_000), new(40_000)]), ("HttpRequest", [new(20_000)])], RunCostPrior.PerRecord([http]), measured);
        var around = (double records) => RunCostPrior.RunOverheadSeconds + records * RunCostPrior.VerifyMicrosecondsPerRecord / 1e6;
        Assert.AreEqual(2.0 + around(20_000) + 4.0 + around(40_000) + around(20_000) + 20_000 * 50 / 1e6, seconds, 1e-9);
        Assert.AreEqual(1, known);
    }

    [TestMethod]
    public void A_run_with_a_payload_is_priced_by_runs_with_that_payload_or_else_by_its_bytes()
    {
        using var folder = new TempDirectory("it-estimate-");
        var measurements = new[] { (0, 1.0), (262_144, 8.0) }.SelectMany(m => Enumerable.Range(1, 3).Select(r =>
            new IntegrationTasks.Transfer.Measurement
            {
                Transport = "TcpClient2", Records = 2_000, PayloadBytes = m.Item1 > 0 ? m.Item1 : null, Repetition = r, ElapsedSeconds = m.Item2, Verified = true,
            })).ToList();
        IntegrationTasks.Exporters.ReportFiles.Write(Path.Combine(folder, "results"), measurements, new Dictionary<string, string>());
        var measured = EstimateRunAll.MeanSeconds(Directory.GetFiles(Path.Combine(folder, "history"), "results-*.json").Single());
        var none = new Dictionary<string, double>();

        var (seconds, known) = EstimateRunAll.Estimate([("TcpClient2", [new(4_000, 262_144)])], none, measured);
        Assert.AreEqual(16.0 + RunCostPrior.AroundTransferSeconds(4_000, 262_144), seconds, 1e-9);
        Assert.AreEqual(1, known);

        // Never measured at 1 KiB: the prior, which grows with the payload's bytes.
        (seconds, known) = EstimateRunAll.Estimate([("TcpClient2", [new(2_000), new(2_000, 1024)])], none, measured);
        Assert.AreEqual(1.0 + RunCostPrior.AroundTransferSeconds(2_000) + RunCostPrior.RunSeconds(none, "TcpClient2", 2_000, 1024), seconds, 1e-9);
        Assert.AreEqual(0, known);
        Assert.AreEqual(2_000 * (RunCostPrior.TransferMicrosecondsPerPayloadKiB + RunCostPrior.VerifyMicrosecondsPerPayloadKiB) / 1e6,
            RunCostPrior.RunSeconds(none, "TcpClient2", 2_000, 1024) - RunCostPrior.RunSeconds(none, "TcpClient2", 2_000), 1e-9);
    }

    [TestMethod]
    public void The_plan_counts_warm_ups_at_the_smallest_count_of_each_client_count_and_the_peer_at_one_client()
    {
        using var folder = new TempDirectory("it-estimate-");
        var engine = new FakeBuildEngine();
        // -p:Clients=1+2+4, batches of 100, 2 repetitions after 1 warm-up: TcpClient2 at 2,000 records runs at 1, 2 and 4 clients, at 200
        // (2 batches) at 1 and 2: 10 measured runs, and warm-ups at 200 for 1 and 2 clients and at 2,000 for 4 (12,800 + 2,400 records);
        // the peer at one client: 3 runs of 2,000.
        var plan = RunPlanner.Plan([new("Peer: SQLite ATTACH", [2000], RunKind.Peer, OneClient: true), new("TcpClient2", [2000, 200], ServerTarget: "TcpServer2")],
            new RunPlanSettings([1, 2, 4], 100, 2, 1, RunOrder.ByTransport, 0), () => 0);
        var estimate = new EstimateRunAll { BuildEngine = engine, Steps = [.. PlanRunAll.ToItems(plan, progress: false)], HistoryDirectory = Path.Combine(folder, "history") };
        Assert.IsTrue(estimate.Execute(), engine.Log);
        StringAssert.Contains(engine.Log, "RunAll plan: 16 runs moving 21,200 records in all");
        var runs = new[] { 2000, 2000, 2000, 200, 200 }.SelectMany(r => new[] { r, r }).Concat([200, 200, 2000]).Concat([2000, 2000, 2000]);
        Assert.AreEqual(runs.Sum(r => RunCostPrior.RunSeconds(new Dictionary<string, double>(), "", r)), estimate.PlannedSeconds, 1e-9);
    }
}
