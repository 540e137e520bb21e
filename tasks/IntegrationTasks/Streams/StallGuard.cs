namespace IntegrationTasks.Streams;

/// <summary>
/// The stall guard of the suite's stream servers (the TCP generations' connections, the net.tcp endpoint's): a read from the
/// client runs under a deadline that traffic the other way can move on; one that outlasts it ends in IT3007 with the caller's
/// words and the connection is dropped — a client idle or stalled mid-record cannot hold a connection and its work forever.
/// (Kestrel's endpoints have theirs in the host process: tasks/IntegrationTasks.Host/StallGuard.cs.)
/// </summary>
public sealed class StallGuard(TimeSpan timeout)
{
    private CancellationTokenSource? _current;

    /// <summary>Replies the server is still making for this client: while there are any, the client is waiting, not idle.</summary>
    private int _holds;

    public TimeSpan Timeout { get; } = timeout;

    /// <summary>Runs <paramref name="read"/> within the timeout; IT3007 with <paramref name="stalled"/>'s words when it runs out.</summary>
    public async ValueTask<T> WithinAsync<T>(Func<CancellationToken, ValueTask<T>> read, Func<string> stalled, CancellationToken cancellationToken)
    {
        using var deadline = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        deadline.CancelAfter(Volatile.Read(ref _holds) > 0 ? System.Threading.Timeout.InfiniteTimeSpan : Timeout);
        Interlocked.Exchange(ref _current, deadline);
        // A hold released while this deadline was being made did not see it: armed here instead (the exchange is a full fence).
        if (Volatile.Read(ref _holds) == 0)
            Arm(deadline, Timeout);
        try
        {
            return await read(deadline.Token).ConfigureAwait(false);
        }
        catch (OperationCanceledException) when (deadline.IsCancellationRequested && !cancellationToken.IsCancellationRequested)
        {
            throw new IntegrationException(ErrorCodes.ConnectionStalled, stalled());
        }
        finally
        {
            Interlocked.CompareExchange(ref _current, null, deadline);
        }
    }

    /// <summary>Traffic the other way (a reply being read by the client): the read under way gets the whole timeout again.</summary>
    public void Progressed()
    {
        if (Volatile.Read(ref _holds) == 0)
            Arm(Volatile.Read(ref _current), Timeout);
    }

    /// <summary>
    /// The server starts making a reply: until it is made (<see cref="Release"/>) the read under way has no deadline, since a client
    /// waiting for a slow reply has done nothing wrong. Writing the reply moves the deadline on as before.
    /// </summary>
    public void Hold()
    {
        if (Interlocked.Increment(ref _holds) == 1)
            Arm(Volatile.Read(ref _current), System.Threading.Timeout.InfiniteTimeSpan);
    }

    /// <summary>The reply is made: the read under way gets the whole timeout again once no other is being made.</summary>
    public void Release()
    {
        if (Interlocked.Decrement(ref _holds) == 0)
            Arm(Volatile.Read(ref _current), Timeout);
    }

    private static void Arm(CancellationTokenSource? deadline, TimeSpan after)
    {
        try
        {
            deadline?.CancelAfter(after);
        }
        catch (ObjectDisposedException)
        {
            // that read has just ended
        }
    }
}
