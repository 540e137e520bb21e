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

    [TestMethod]
    public async Task In_open_loop_each_batch_counts_from_its_slot_on_the_schedule_not_from_when_it_went()
    {
        long now = 1_000_000; // any clock reading but 0, which marks a batch never sent
        var ticksPerMs = System.Diagnostics.Stopwatch.Frequency / 1000;
        var latency = new BatchLatency(5, ratePerSecond: 100) { Now = () => now }; // a slot every 10 ms
        for (var batch = 0; batch < 5; batch++)
            await latency.SendTurnAsync(batch, CancellationToken.None); // the clock stands still: every send is "on time" or waits for its slot
        now += 100 * ticksPerMs; // a server that answered nothing for 100 ms, then everything at once
        for (var batch = 0; batch < 5; batch++)
            latency.Committed(batch);
        var summary = latency.Summarize()!;
        Assert.AreEqual(5, summary.Batches);
        Assert.AreEqual(100, summary.MaxMs, 0.5, "the first slot was at 0");
        Assert.AreEqual(80, summary.P50Ms, 0.5, "slots at 0, 10, 20, 30, 40 ms: waits of 100, 90, 80, 70 and 60 ms");
    }
}
