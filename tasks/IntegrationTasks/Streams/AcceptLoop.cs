namespace IntegrationTasks.Streams;

/// <summary>
/// The one accept loop of the suite's stream servers (the TCP generations' host, the net.tcp endpoint): takes connections from
/// a listener until cancelled, serves each on a task of its own — with a <see cref="ConnectionSlot"/> the server takes once the
/// connection is one it serves (after its TLS handshake, so that connections stalled in one hold no slot of a client's), and
/// refuses in its own protocol when none is left — disposes it after, and when stopping stops listening and waits for them all.
/// Connections not yet holding a slot are bounded too: past <c>maxWaiting</c> of them a new one is closed before anything is read.
/// </summary>
public sealed class AcceptLoop(IStreamListener listener, int maxConnections, int maxWaiting = AcceptLoop.DefaultMaxWaiting, IEventLog? log = null)
{
    /// <summary>Connections that may wait for a slot at once (each in a handshake bounded in time): about 1,000 SslStreams' memory.</summary>
    public const int DefaultMaxWaiting = 1000;

    private int _open;
    private int _served;

    /// <summary>Connections being served (or refused) now.</summary>
    public int Open => Volatile.Read(ref _open);

    /// <summary>A served connection's place among the <c>maxConnections</c>: taken once, given back when the connection ends.</summary>
    public sealed class ConnectionSlot
    {
        private readonly AcceptLoop _loop;

        internal ConnectionSlot(AcceptLoop loop) => _loop = loop;

        internal bool Taken { get; private set; }

        /// <summary>Takes a slot; false when every one is taken (the connection is then to be refused).</summary>
        public bool TryTake()
        {
            if (Taken)
                return true;
            if (Interlocked.Increment(ref _loop._served) > _loop._maxConnections)
            {
                Interlocked.Decrement(ref _loop._served);
                return false;
            }
            return Taken = true;
        }
    }

    private readonly int _maxConnections = maxConnections;

    public async Task RunAsync(Func<StreamConnection, ConnectionSlot, CancellationToken, Task> serve, CancellationToken cancellationToken)
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
                if (Interlocked.Increment(ref _open) - Volatile.Read(ref _served) > maxWaiting)
                {
                    // Every slot taken and as many more waiting as this server keeps: closed unread, at once.
                    log?.Warning(ErrorCodes.ServerBusy, $"Closed the connection from {connection.Peer} unread: {maxWaiting} connections are already waiting to be served.");
                    await connection.DisposeAsync().ConfigureAwait(false);
                    Interlocked.Decrement(ref _open);
                    continue;
                }
                connections.Add(ServeOneAsync(connection));
            }
        }
        finally
        {
            await listener.DisposeAsync().ConfigureAwait(false);
            await Task.WhenAll(connections).ConfigureAwait(false);
        }

        async Task ServeOneAsync(StreamConnection connection)
        {
            await Task.Yield(); // leave the accept loop at once
            var slot = new ConnectionSlot(this);
            try
            {
                await serve(connection, slot, cancellationToken).ConfigureAwait(false);
            }
            finally
            {
                await connection.DisposeAsync().ConfigureAwait(false);
                if (slot.Taken)
                    Interlocked.Decrement(ref _served);
                Interlocked.Decrement(ref _open);
            }
        }
    }
}
