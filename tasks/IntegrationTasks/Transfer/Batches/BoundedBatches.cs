namespace IntegrationTasks.Transfer;

/// <summary>
/// Runs one piece of work per batch with at most <c>maxInFlight</c> running at once, and returns only
/// when every one has finished (the series' clients could return before their jobs did). The first
/// failure cancels the rest and is rethrown.
/// </summary>
public static class BoundedBatches
{
    public static async Task RunAsync(int totalBatches, int maxInFlight, Func<int, CancellationToken, Task> work, CancellationToken cancellationToken)
    {
        using var stop = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        using var slots = new SemaphoreSlim(maxInFlight, maxInFlight);
        var running = new List<Task>();
        Exception? failure = null;
        for (var batch = 0; batch < totalBatches && failure is null; batch++)
        {
            try
            {
                await slots.WaitAsync(stop.Token).ConfigureAwait(false);
            }
            catch (OperationCanceledException)
            {
                break;
            }
            // A slot freed by a batch the first failure stopped can reach this wait before its cancellation does: start nothing more.
            if (stop.IsCancellationRequested)
            {
                slots.Release();
                break;
            }
            running.RemoveAll(t => t.IsCompletedSuccessfully);
            running.Add(RunOneAsync(batch));
        }
        try
        {
            await Task.WhenAll(running).ConfigureAwait(false);
        }
        catch (Exception) when (failure is not null)
        {
        }
        if (failure is not null)
            System.Runtime.ExceptionServices.ExceptionDispatchInfo.Throw(failure);
        cancellationToken.ThrowIfCancellationRequested();

        async Task RunOneAsync(int batch)
        {
            try
            {
                await work(batch, stop.Token).ConfigureAwait(false);
            }
            catch (Exception e)
            {
                if (Interlocked.CompareExchange(ref failure, e, null) is null)
                    await stop.CancelAsync().ConfigureAwait(false);
                throw;
            }
            finally
            {
                slots.Release();
            }
        }
    }

    /// <summary>The same on <c>threads</c> dedicated threads, each taking the next batch until none is left.</summary>
    public static Task RunOnThreadsAsync(int totalBatches, int threads, Action<int, CancellationToken> work, CancellationToken cancellationToken)
    {
        var next = -1;
        Exception? failure = null;
        var stop = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        var finished = Enumerable.Range(0, Math.Min(threads, totalBatches)).Select(_ =>
        {
            var done = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
            new Thread(() =>
            {
                try
                {
                    int batch;
                    while (!stop.IsCancellationRequested && (batch = Interlocked.Increment(ref next)) < totalBatches)
                        work(batch, stop.Token);
                    done.SetResult();
                }
                catch (Exception e)
                {
                    Interlocked.CompareExchange(ref failure, e, null); // before the cancellation, which can fail the other threads' work
                    stop.Cancel();
                    done.SetException(e);
                }
            }) { IsBackground = true, Name = "batch worker" }.Start();
            return done.Task;
        }).ToArray();
        return TaskGroup.WhenAllOrFirstFailure(stop, finished).ContinueWith(t =>
        {
            stop.Dispose();
            return t.IsFaulted && Volatile.Read(ref failure) is { } first ? Task.FromException(first) : t;
        }, TaskScheduler.Default).Unwrap();
    }
}
