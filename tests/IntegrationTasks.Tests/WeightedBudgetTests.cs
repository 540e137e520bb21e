namespace IntegrationTasks.Tests;

[TestClass]
[TestCategory("Unit")]
public sealed class WeightedBudgetTests
{
    [TestMethod]
    public async Task A_taker_waits_until_its_whole_weight_fits_and_takers_are_served_in_order()
    {
        var budget = new WeightedBudget(100);
        var first = await budget.TakeAsync(70, CancellationToken.None);
        var large = budget.TakeAsync(60, CancellationToken.None).AsTask();
        var small = budget.TakeAsync(10, CancellationToken.None).AsTask();
        Assert.IsFalse(large.IsCompleted, "60 does not fit beside 70");
        Assert.IsFalse(small.IsCompleted, "10 would fit, but waits behind the larger one that came first (no starvation)");

        first.Dispose();
        using var largeLease = await large.WaitAsync(TimeSpan.FromSeconds(10));
        using var smallLease = await small.WaitAsync(TimeSpan.FromSeconds(10));
        Assert.AreEqual(30, budget.Available);

        first.Dispose(); // a second dispose gives nothing back twice
        Assert.AreEqual(30, budget.Available);
    }

    [TestMethod]
    public async Task A_cancelled_taker_stands_aside_and_the_next_in_line_is_served()
    {
        var budget = new WeightedBudget(100);
        using var held = await budget.TakeAsync(50, CancellationToken.None);
        using var cancel = new CancellationTokenSource();
        var blocked = budget.TakeAsync(80, cancel.Token).AsTask();
        var behind = budget.TakeAsync(40, CancellationToken.None).AsTask();
        Assert.IsFalse(behind.IsCompleted);

        await cancel.CancelAsync();
        await Assert.ThrowsAsync<OperationCanceledException>(() => blocked.WaitAsync(TimeSpan.FromSeconds(10)));
        using var lease = await behind.WaitAsync(TimeSpan.FromSeconds(10));
        Assert.AreEqual(10, budget.Available);
    }

    [TestMethod]
    public async Task A_weight_above_the_capacity_is_taken_as_the_capacity()
    {
        var budget = new WeightedBudget(100);
        using (var lease = await budget.TakeAsync(500, CancellationToken.None))
        {
            Assert.AreEqual(100, lease.Weight);
            Assert.AreEqual(0, budget.Available);
        }
        Assert.AreEqual(100, budget.Available);
    }
}
