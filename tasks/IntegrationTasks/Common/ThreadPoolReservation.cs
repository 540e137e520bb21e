namespace IntegrationTasks.Common;

/// <summary>
/// Pool threads a caller is about to block in synchronous calls, added to the thread pool's minimum for as long as it holds them.
/// Without it the pool meets them as starvation and adds threads only slowly (a synchronous WCF call also needs a pool thread to
/// complete), and how long that takes depends on how many threads the pool kept from whatever ran before: the series' Task
/// variants' times for the same work scattered widely within one RunAll, and hardly at all with the minimum raised.
/// Process-wide and counted, so clients running at once add up, and the minimum is back to what it was when the last one ends.
/// </summary>
public sealed class ThreadPoolReservation : IDisposable
{
    private static readonly Lock Gate = new();
    private static int reservedThreads;
    private static int minimumBefore;
    private static int completionMinimum;

    private int _threads;

    private ThreadPoolReservation(int threads) => _threads = threads;

    /// <summary>The worker threads the pool keeps ready beyond its own minimum while reservations are held.</summary>
    public static int ReservedThreads
    {
        get
        {
            lock (Gate)
                return reservedThreads;
        }
    }

    public static ThreadPoolReservation Reserve(int threads)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(threads);
        lock (Gate)
        {
            if (reservedThreads == 0)
                ThreadPool.GetMinThreads(out minimumBefore, out completionMinimum);
            reservedThreads += threads;
            Apply();
        }
        return new ThreadPoolReservation(threads);
    }

    public void Dispose()
    {
        lock (Gate)
        {
            if (_threads == 0)
                return;
            reservedThreads -= _threads;
            _threads = 0;
            Apply();
        }
    }

    private static void Apply()
    {
        ThreadPool.GetMaxThreads(out var maximum, out _);
        ThreadPool.SetMinThreads(Math.Min(maximum, minimumBefore + reservedThreads), completionMinimum);
    }
}
