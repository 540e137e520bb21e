namespace IntegrationTasks.Tests;

[TestClass]
[TestCategory("Unit")]
public sealed class RunProgressTests
{
    [TestMethod]
    public void A_progress_line_says_which_transport_of_how_many_and_the_time_left()
    {
        // 2 record counts × 10 repetitions + 3 warm-ups (at the smallest count only).
        var line = RunProgressEstimate.Describe("TcpClient2", 2, 3, [20_000, 50_000], 10, warmupRuns: 3, TimeSpan.FromSeconds(200), TimeSpan.FromSeconds(100));
        StringAssert.StartsWith(line, "RunAll: transport 2 of 3, TcpClient2: ");
        StringAssert.Contains(line, "20,000 + 50,000 records × 10 repetitions");
        StringAssert.Contains(line, "after 3 warm-ups (23 runs)");
        StringAssert.EndsWith(line, "1 min 40 s elapsed, about 3 min 20 s left.");
        // No plan to measure against: no time left; a peer (no place among the transports) is named alone.
        var peer = RunProgressEstimate.Describe("Peer: SQLite ATTACH", 0, 0, [1_000], 2, warmupRuns: 0, left: null, TimeSpan.Zero);
        StringAssert.StartsWith(peer, "RunAll: Peer: SQLite ATTACH: 1,000 records × 2 repetitions");
        StringAssert.EndsWith(peer, "(2 runs); 0 s elapsed.");
    }

    [TestMethod]
    public void The_time_left_is_the_prior_of_the_runs_to_do_at_the_pace_so_far_weighed_against_the_prior()
    {
        // Nothing done: the prior of every run, then what comes after the last.
        Assert.AreEqual(300 + RunCostPrior.AfterRunsSeconds, RunCostPrior.Left(300, 0, TimeSpan.Zero).TotalSeconds, 1e-9);
        // 100 s of the prior done in 200 s: the pace is (200 + 60) / (100 + 60), not 2 — the first runs do not set it alone.
        var pace = (200 + RunCostPrior.PriorWeightSeconds) / (100 + RunCostPrior.PriorWeightSeconds);
        Assert.AreEqual(200 * pace + RunCostPrior.AfterRunsSeconds, RunCostPrior.Left(300, 100, TimeSpan.FromSeconds(200)).TotalSeconds, 1e-9);
        // Everything done: only what comes after.
        Assert.AreEqual(RunCostPrior.AfterRunsSeconds, RunCostPrior.Left(300, 300, TimeSpan.FromSeconds(500)).TotalSeconds, 1e-9);
    }

    [TestMethod]
    public void A_run_costs_its_transports_prior_per_record_the_verification_and_a_fixed_overhead()
    {
        var slow = new Microsoft.Build.Utilities.TaskItem("SoapSmallRequests");
        slow.SetMetadata(nameof(TransportDefinition.PriorMicrosecondsPerRecord), "400");
        var perRecord = RunCostPrior.PerRecord([slow, new Microsoft.Build.Utilities.TaskItem("TcpClient2")]);
        Assert.AreEqual(RunCostPrior.RunOverheadSeconds + 20_000 * (400 + RunCostPrior.VerifyMicrosecondsPerRecord) / 1e6,
            RunCostPrior.RunSeconds(perRecord, "SoapSmallRequests", 20_000), 1e-9);
        Assert.AreEqual(RunCostPrior.RunOverheadSeconds + 20_000 * (RunCostPrior.DefaultMicrosecondsPerRecord + RunCostPrior.VerifyMicrosecondsPerRecord) / 1e6,
            RunCostPrior.RunSeconds(perRecord, "TcpClient2", 20_000), 1e-9, "no prior of its own: the default");
    }
}
