namespace IntegrationTasks.Streams;

/// <summary>
/// The one accept loop of the suite's stream servers (the TCP generations' host, the net.tcp endpoint): takes connections from
/// a listener until cancelled, serves each on a task of its own — told whether it is over the server's maximum, so that the
/// server can refuse it in its own protocol — disposes it after, and when stopping stops listening and waits for them all.
/// </summary>
public sealed class AcceptLoop(IStreamListener listener, int maxConnections)
{
    private int _open;

    /// <summary>Connections being served (or refused) now.</summary>
    public int Open => Volatile.Read(ref _open);

    public async Task RunAsync(Func<StreamConnection, bool, CancellationToken, Task> serve, CancellationToken cancellationToken)
    {
        var connections = new List<Task>();
        try
        {
            while (!cancellationToken.IsCancellationRequested)
            {
                StreamConnection connection;
                try
                {
                    connection = await listener.AcceptAsync(cancellationToken).ConfigureAwait(false);
                }
                catch (OperationCanceledException)
                {
                    break;
                }
                connections.RemoveAll(t => t.IsCompleted);
                connections.Add(ServeOneAsync(connection, overLimit: Interlocked.Increment(ref _open) > maxConnections));
            }
        }
        finally
        {
            await listener.DisposeAsync().ConfigureAwait(false);
            await Task.WhenAll(connections).ConfigureAwait(false);
        }

        async Task ServeOneAsync(StreamConnection connection, bool overLimit)
        {
            await Task.Yield(); // leave the accept loop at once
            try
            {
                await serve(connection, overLimit, cancellationToken).ConfigureAwait(false);
            }
            finally
            {
                await connection.DisposeAsync().ConfigureAwait(false);
                Interlocked.Decrement(ref _open);
            }
        }
    }
}
