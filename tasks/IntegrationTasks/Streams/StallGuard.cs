using IntegrationTasks.Common;

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

    public TimeSpan Timeout { get; } = timeout;

    /// <summary>Runs <paramref name="read"/> within the timeout; IT3007 with <paramref name="stalled"/>'s words when it runs out.</summary>
    public async ValueTask<T> WithinAsync<T>(Func<CancellationToken, ValueTask<T>> read, Func<string> stalled, CancellationToken cancellationToken)
    {
        using var deadline = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        deadline.CancelAfter(Timeout);
        Volatile.Write(ref _current, deadline);
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
        try
        {
            Volatile.Read(ref _current)?.CancelAfter(Timeout);
        }
        catch (ObjectDisposedException)
        {
            // that read has just ended
        }
    }
}
