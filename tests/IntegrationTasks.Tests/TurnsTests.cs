namespace IntegrationTasks.Tests;

[TestClass]
[TestCategory("Unit")]
public sealed class TurnsTests
{
    [TestMethod]
    public async Task Turns_are_taken_up_to_the_limit_the_next_waits_its_time_and_one_more_than_may_wait_is_refused_at_once()
    {
        var turns = new Turns(atOnce: 2, waiting: 1);
        using var first = await turns.TakeAsync(TimeSpan.FromSeconds(30), CancellationToken.None);
        var second = await turns.TakeAsync(TimeSpan.FromSeconds(30), CancellationToken.None);
        Assert.AreEqual((TurnOutcome.Taken, TurnOutcome.Taken), (first.Outcome, second.Outcome));

        // Both taken: the next waits, and one more than may wait is refused without waiting.
        var waiting = turns.TakeAsync(TimeSpan.FromSeconds(30), CancellationToken.None);
        Assert.IsFalse(waiting.IsCompleted);
        Assert.AreEqual(TurnOutcome.TooManyWaiting, (await turns.TakeAsync(TimeSpan.FromSeconds(30), CancellationToken.None)).Outcome);

        // A turn given back goes to the one waiting.
        second.Dispose();
        using var third = await waiting.WaitAsync(TimeSpan.FromSeconds(10));
        Assert.AreEqual(TurnOutcome.Taken, third.Outcome);

        // None free again: a wait ends at its limit, and a refusal gives nothing back.
        Assert.AreEqual(TurnOutcome.TimedOut, (await turns.TakeAsync(TimeSpan.FromMilliseconds(50), CancellationToken.None)).Outcome);
        using (await turns.TakeAsync(TimeSpan.FromMilliseconds(50), CancellationToken.None))
        {
        }
        Assert.IsFalse(turns.TakeAsync(TimeSpan.FromSeconds(30), CancellationToken.None).Wait(100), "still two turns taken");
    }
}
