
namespace IntegrationTasks.Tests;

[TestClass]
[TestCategory("Unit")]
public sealed class RunProgressTests
{
    [TestMethod]
    public void A_progress_line_says_which_transport_of_how_many_and_estimates_the_time_left_from_the_runs_so_far()
    {
        // 3 transports × (20,000 + 50,000) × (10 + 1) = 2,310,000 records; 770,000 done in 100 s: 1,540,000 left, about 200 s.
        var line = IntegrationTasks.Results.RunProgressEstimate.Describe("TcpClient2", 2, 3, [20_000, 50_000], 10, warmupRuns: 1,
            plannedRecords: 2_310_000, recordsDone: 770_000, elapsed: TimeSpan.FromSeconds(100));
        Assert.AreEqual("RunAll: transport 2 of 3, TcpClient2: 20,000 + 50,000 records × 10 repetitions after a warm-up (22 runs); 1 min 40 s elapsed, about 3 min 20 s left (from the runs so far).", line);
        Assert.AreEqual("RunAll: transport 2 of 3, TcpClient2: 20,000 + 50,000 records × 10 repetitions after 3 warm-ups (26 runs); 1 min 40 s elapsed, about 3 min 20 s left (from the runs so far).",
            IntegrationTasks.Results.RunProgressEstimate.Describe("TcpClient2", 2, 3, [20_000, 50_000], 10, warmupRuns: 3, 2_310_000, 770_000, TimeSpan.FromSeconds(100)));
        // Nothing done yet: no estimate; a peer (no place among the transports) is named alone.
        Assert.AreEqual("RunAll: Peer: SQLite ATTACH: 1,000 records × 2 repetitions (2 runs); 0 s elapsed.",
            IntegrationTasks.Results.RunProgressEstimate.Describe("Peer: SQLite ATTACH", 0, 0, [1_000], 2, warmupRuns: 0, 2_000, 0, TimeSpan.Zero));
    }
}
