using IntegrationTasks.Transfer;

namespace IntegrationTasks.Tests;

[TestClass]
[TestCategory("Unit")]
public sealed class BatchLatencyTests
{
    [TestMethod]
    public void Histograms_round_trip_through_their_encoding_and_merge_exactly()
    {
        var first = BatchLatency.NewHistogram();
        var second = BatchLatency.NewHistogram();
        for (var v = 1; v <= 1000; v++)
            first.RecordValue(v * 1000); // 1 ms … 1 s
        second.RecordValue(5_000_000); // one 5 s outlier on another machine

        var merged = LatencySummary.Merge([LatencySummary.Of(first), null, LatencySummary.Of(second)])!;
        Assert.AreEqual(1001, merged.Batches);
        Assert.AreEqual(500, merged.P50Ms, 2.5); // three significant digits: within 0.5 %
        Assert.AreEqual(990, merged.P99Ms, 5);
        Assert.AreEqual(5000, merged.MaxMs, 25);
        // The encoding is exact: merging one summary gives back its own figures.
        var alone = LatencySummary.Of(first);
        Assert.AreEqual(alone with { }, LatencySummary.Merge([alone]));
    }

    [TestMethod]
    public void A_batch_counts_from_its_last_request_to_its_commit_and_an_unmarked_one_not_at_all()
    {
        var plan = new BatchPlan(3, 10);
        long now = 0;
        var ticksPerMs = System.Diagnostics.Stopwatch.Frequency / 1000;
        var committed = new CommittedBatches(plan, new BatchLatency(plan.TotalBatches) { Now = () => now });
        Assert.IsNull(committed.Latency.Summarize());
        committed.Latency.Sent(0);
        now += 500 * ticksPerMs;
        committed.Latency.Sent(0); // asked again after a break: counts from here
        now += 20 * ticksPerMs;
        committed.Add(0);
        committed.Add(1); // never marked sent (a transport that does not mark): not counted
        var summary = committed.Latency.Summarize()!;
        Assert.AreEqual(1, summary.Batches);
        Assert.AreEqual(20, summary.MaxMs, 0.1);
    }
}
