namespace IntegrationTasks.Tests;

[TestClass]
[TestCategory("Unit")]
public sealed class OutstandingBatchesTests
{
    [TestMethod]
    public async Task The_batches_sent_and_unanswered_are_asked_for_again_with_the_same_request()
    {
        var plan = new BatchPlan(4, 10);
        var committed = new CommittedBatches(plan);
        using var outstanding = new OutstandingBatches([2, 0, 3], maxInFlight: 3, "run", client: 0, plan.TotalBatches, "replies");
        var first = new Dictionary<int, byte[]>();
        await outstanding.SendEachAsync(plan, committed, (batch, request) =>
        {
            first[batch] = request.ToArray();
            return Task.CompletedTask;
        }, CancellationToken.None);
        // Batch 1 was never pending (committed before this attempt): only what this attempt sent is unanswered.
        CollectionAssert.AreEqual(new[] { 0, 2, 3 }, outstanding.Unanswered());
        byte[]? again = null;
        await outstanding.SendAgainAsync(plan, 2, (batch, request) =>
        {
            Assert.AreEqual(2, batch);
            again = request.ToArray();
            return Task.CompletedTask;
        });
        CollectionAssert.AreEqual(first[2], again);
        Assert.AreEqual("run.0.2", outstanding.RequestId(2));
    }
}
