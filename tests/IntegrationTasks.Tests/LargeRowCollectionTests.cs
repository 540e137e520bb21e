namespace IntegrationTasks.Tests;

[TestClass]
[TestCategory("Unit")]
[DoNotParallelize] // it counts process-wide collections and a process-wide budget
public sealed class LargeRowCollectionTests
{
    private static ServiceRecord Row(int id, byte[]? payload = null, string? text = null) =>
        SampleData.Create(id) with { Payload = payload, PayloadText = text };

    [TestMethod]
    public void Only_payloads_on_the_large_object_heap_are_counted()
    {
        var large = new byte[LargeRowCollection.LargeObjectBytes];
        var small = new byte[LargeRowCollection.LargeObjectBytes - 1];
        var text = new string('x', LargeRowCollection.LargeObjectBytes / 2);
        Assert.AreEqual(0L, LargeRowCollection.LargePayloadBytes([Row(1), Row(2, small), Row(3, text: "short")]));
        Assert.AreEqual(2L * large.Length + text.Length * 2L,
            LargeRowCollection.LargePayloadBytes([Row(1, large), Row(2, small), Row(3, large), Row(4, text: text)]));
    }

    [TestMethod]
    public async Task A_collection_is_asked_for_once_a_budget_of_large_payloads_is_committed()
    {
        var megabyte = new byte[1 << 20];
        var batch = Enumerable.Range(1, 4).Select(id => Row(id, megabyte)).ToArray();
        // A background collection already under way when the budget is reached counts before it and makes the one asked for a
        // no-op: a blocking one first waits it out, so the count can only move by the collection asked for (or a later one).
        GC.Collect();
        var gen2Before = GC.CollectionCount(2);
        var asked = Enumerable.Range(0, (int)(2 * LargeRowCollection.BudgetBytes / (4L << 20))).Count(_ => LargeRowCollection.Committed(batch));
        Assert.IsTrue(asked is 2 or 3, $"asked {asked} times"); // the process-wide count may have started part way into a budget
        Assert.IsFalse(LargeRowCollection.Committed([Row(1, new byte[1000])]));
        // The collection asked for is a background one: it has happened once the count moves, soon but not at once.
        await Eventually.WaitUntilAsync(() => GC.CollectionCount(2) > gen2Before, "a full collection after the budget", TimeSpan.FromSeconds(10));
    }
}
