namespace IntegrationTasks.Tests;

/// <summary>The bounded batch runner every concurrent client uses, driven with gates instead of timing: deterministic.</summary>
[TestClass]
[TestCategory("Unit")]
public sealed class BoundedBatchesTests
{
    [TestMethod]
    [Timeout(20_000, CooperativeCancellation = true)]
    public async Task At_most_MaxInFlight_batches_run_at_once_and_the_run_ends_only_when_every_one_has()
    {
        var gates = Enumerable.Range(0, 10).Select(_ => new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously)).ToArray();
        var started = Enumerable.Range(0, 10).Select(_ => new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously)).ToArray();
        int running = 0, most = 0;
        var run = BoundedBatches.RunAsync(10, 3, async (batch, _) =>
        {
            var now = Interlocked.Increment(ref running);
            InterlockedMax(ref most, now);
            started[batch].SetResult();
            await gates[batch].Task;
            Interlocked.Decrement(ref running);
        }, CancellationToken.None);
        await Task.WhenAll(started[0].Task, started[1].Task, started[2].Task);
        Assert.IsFalse(started[3].Task.IsCompleted, "a fourth batch started while three were running");
        for (var batch = 0; batch < 9; batch++)
        {
            gates[batch].SetResult();
            await started[Math.Min(9, batch + 3)].Task; // the slot freed goes to the next batch
        }
        Assert.IsFalse(run.IsCompleted, "the run ended before its last batch did");
        gates[9].SetResult();
        await run;
        Assert.AreEqual(3, most);
    }

    [TestMethod]
    [Timeout(20_000, CooperativeCancellation = true)]
    public async Task The_first_failure_stops_the_rest_and_is_the_one_rethrown()
    {
        var failing = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var waiting = 0;
        var run = BoundedBatches.RunAsync(8, 4, async (batch, token) =>
        {
            if (batch == 2)
            {
                await failing.Task;
                throw new InvalidOperationException("batch 2 failed");
            }
            Interlocked.Increment(ref waiting);
            await Task.Delay(Timeout.Infinite, token); // ends only when the runner stops the others
        }, CancellationToken.None);
        failing.SetResult();
        var e = await Assert.ThrowsExactlyAsync<InvalidOperationException>(() => run);
        Assert.AreEqual("batch 2 failed", e.Message, "the cause, not the cancellations it led to");
        Assert.AreEqual(3, waiting, "no batch started after the failure");
    }

    [TestMethod]
    [Timeout(20_000, CooperativeCancellation = true)]
    public async Task On_threads_the_first_failure_by_time_is_the_one_reported()
    {
        using var firstFailed = new ManualResetEventSlim();
        var run = BoundedBatches.RunOnThreadsAsync(4, 2, (batch, token) =>
        {
            if (batch == 0)
            {
                firstFailed.Set();
                throw new InvalidOperationException("the cause");
            }
            token.WaitHandle.WaitOne(); // the other thread's call ends only when the runner stops it
            throw new OperationCanceledException("ended by the stop", token);
        }, CancellationToken.None);
        var e = await Assert.ThrowsExactlyAsync<InvalidOperationException>(() => run);
        Assert.AreEqual("the cause", e.Message);
    }

    private static void InterlockedMax(ref int target, int value)
    {
        int seen;
        while ((seen = Volatile.Read(ref target)) < value && Interlocked.CompareExchange(ref target, value, seen) != seen)
        {
        }
    }
}
