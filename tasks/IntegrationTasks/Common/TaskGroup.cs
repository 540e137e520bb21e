namespace IntegrationTasks.Common;

/// <summary>Runs cooperating loops (send, receive, process…) so that the first failure cancels the others.</summary>
public static class TaskGroup
{
    public static async Task WhenAllOrFirstFailure(CancellationTokenSource cancellation, params Task[] tasks)
    {
        var pending = tasks.ToList();
        while (pending.Count > 0)
        {
            var done = await Task.WhenAny(pending).ConfigureAwait(false);
            pending.Remove(done);
            if (done.IsFaulted || done.IsCanceled)
                await cancellation.CancelAsync().ConfigureAwait(false);
        }
        // Report the root cause, not the cancellations it caused in the other loops.
        var failure = tasks.Where(t => t.IsFaulted).Select(t => t.Exception!.InnerException!)
            .OrderBy(e => e is OperationCanceledException ? 1 : 0).FirstOrDefault();
        if (failure is not null)
            System.Runtime.ExceptionServices.ExceptionDispatchInfo.Throw(failure);
        cancellation.Token.ThrowIfCancellationRequested();
        foreach (var task in tasks)
            await task.ConfigureAwait(false);
    }

    /// <summary>
    /// Runs <paramref name="work"/> until it ends or <paramref name="broken"/> fails, whichever is first (a connection's loss): then
    /// the work is cancelled and waited for, and <paramref name="broken"/>'s exception is what is thrown.
    /// </summary>
    public static async Task RunUntilBrokenAsync(Task broken, CancellationTokenSource cancellation, Func<Task> work)
    {
        var running = work();
        if (await Task.WhenAny(running, broken).ConfigureAwait(false) == broken)
        {
            await cancellation.CancelAsync().ConfigureAwait(false);
            await running.ContinueWith(_ => { }, CancellationToken.None, TaskContinuationOptions.ExecuteSynchronously, TaskScheduler.Default).ConfigureAwait(false);
            await broken.ConfigureAwait(false);
        }
        await running.ConfigureAwait(false);
    }
}
