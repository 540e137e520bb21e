using System.Net.Sockets;
using IntegrationTasks.Data;
using IntegrationTasks.Wire;

namespace IntegrationTasks.Streams;

public sealed record StreamServerOptions
{
    public int MaxFrameBytes { get; init; } = SettingDefaults.MaxFrameBytes;
    public FrameFormat Format { get; init; } = FrameFormat.Plain;
    public StreamIo Io { get; init; } = StreamIo.Streams;

    /// <summary>A connection that sends no complete request for this long (idle, or stalled mid-frame) is dropped.</summary>
    public TimeSpan ConnectionTimeout { get; init; } = TimeSpan.FromSeconds(120);

    /// <summary>The most records one request may ask for (IT2005 beyond): what bounds a reply, and so the server's memory.</summary>
    public int MaxBatchRecords { get; init; } = SettingDefaults.MaxBatchRecords;

    /// <summary>Clients served at once; one more is answered with a refusal (IT3008) it reads as its error, and closed.</summary>
    public int MaxConnections { get; init; } = 100;

    /// <summary>
    /// How long a TLS handshake may take (at most <see cref="ConnectionTimeout"/>), as Kestrel's default: a connection stalled in one
    /// holds no client's slot meanwhile, and is dropped after it with IT3009.
    /// </summary>
    public TimeSpan HandshakeTimeout { get; init; } = TimeSpan.FromSeconds(10);

    /// <summary>TLS on every connection (the handshake within <see cref="HandshakeTimeout"/>, IT3009 when it fails); null: plaintext.</summary>
    public System.Net.Security.SslServerAuthenticationOptions? Tls { get; init; }
}

/// <summary>
/// What every stream server does with one connection, however it came (an accept loop's TCP or Unix socket, a WebSocket Kestrel
/// accepted): work its requests with the <see cref="ServerModel"/>, close it on a protocol breach with a coded warning (and, where the
/// stream can carry one, a coded close its client reads) while the others go on, and count how it ended.
/// </summary>
public sealed class StreamConnectionServer(RecordSource source, StreamServerOptions options, ServerModel model, IEventLog log)
{
    private long _connections;
    private long _failedConnections;

    public StreamServerOptions Options => options;

    public long ConnectionsServed => Interlocked.Read(ref _connections);
    public long ConnectionsFailed => Interlocked.Read(ref _failedConnections);

    /// <summary>Works the connection until its client ends it, it breaks the protocol, or the server stops; never throws.</summary>
    public async Task ServeAsync(StreamConnection client, CancellationToken serverToken)
    {
        var peer = client.Peer;
        ServerConnection? connection = null;
        try
        {
            await using var frames = FrameConnection.Create(options.Io, client.Stream, options.Format, options.MaxFrameBytes);
            connection = new ServerConnection(frames, source, options.ConnectionTimeout, options.MaxBatchRecords);
            log.Detail($"Connection from {peer}.");
            await model.ServeAsync(connection, serverToken).ConfigureAwait(false);
            Interlocked.Increment(ref _connections);
            // One line per client served: what a person watching a server started by hand sees.
            log.Info($"Connection from {peer} finished: {connection.Answered} requests answered, {frames.BytesRead:N0} bytes in, {frames.BytesWritten:N0} out.");
        }
        catch (OperationCanceledException) when (serverToken.IsCancellationRequested)
        {
            log.Detail($"Connection from {peer} closed: the server is stopping.");
        }
        catch (IntegrationException e) when (e.Code == ErrorCodes.TruncatedFrame && TlsStreams.NothingReadAfterHandshake(client))
        {
            Interlocked.Increment(ref _failedConnections);
            log.Warning(ErrorCodes.TlsRefused, $"The connection from {peer} ended right after the TLS handshake, before sending anything: the client may have refused this server's certificate (its authority or its name), or left.");
        }
        catch (IntegrationException e)
        {
            Interlocked.Increment(ref _failedConnections);
            log.Warning(e.Code, $"Closed the connection from {peer} after {connection?.Answered ?? 0} requests: {e.Message}");
            if (e is PeerStoppedReadingException)
                client.Reset();
            await client.CloseWithErrorAsync(e).ConfigureAwait(false);
        }
        catch (Exception e) when (StreamConnections.IsDisconnect(e))
        {
            Interlocked.Increment(ref _failedConnections);
            log.Warning(ErrorCodes.ConnectionLost, $"The connection from {peer} broke after {connection?.Answered ?? 0} requests: {e.Message}");
        }
        catch (Exception e)
        {
            Interlocked.Increment(ref _failedConnections);
            log.Warning(ErrorCodes.Unexpected, $"Closed the connection from {peer} after an unexpected error: {e}");
        }
    }

    /// <summary>One client over MaxConnections: a refusal frame it reads as its coded error (within 5 s), then the connection closes.</summary>
    public async Task RefuseAsync(StreamConnection client)
    {
        var peer = client.Peer;
        var message = $"{options.MaxConnections} clients are being served, the most this server takes at once (MaxConnections); try again later.";
        log.Warning(ErrorCodes.ServerBusy, $"Refused the connection from {peer}: {message}");
        try
        {
            using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(5));
            var payload = Wire.RecordXml.Refusal(ErrorCodes.ServerBusy, message);
            var frame = new byte[options.Format.HeaderSize + payload.Length];
            options.Format.WriteHeader(frame, payload.Length, batchId: 0);
            payload.CopyTo(frame, options.Format.HeaderSize);
            var stream = client.Stream;
            await stream.WriteAsync(frame, timeout.Token).ConfigureAwait(false);
            client.ShutdownSend();
            // Read what it sends until it closes: closing on its unread request would reset the connection, and the reset can
            // reach the client before the refusal does.
            var scrap = new byte[4096];
            while (await stream.ReadAsync(scrap, timeout.Token).ConfigureAwait(false) > 0)
            {
            }
        }
        catch (Exception e) when (e is IOException or SocketException or OperationCanceledException or ObjectDisposedException)
        {
            // it went away first: nothing to tell it
        }
    }

}

/// <summary>
/// A stream server that takes its connections from a listener (TCP, a Unix socket): the one accept loop, one task per connection,
/// the connection limit; each connection worked by a <see cref="StreamConnectionServer"/>.
/// </summary>
public sealed class StreamServerHost(RecordSource source, IStreamListener listener, StreamServerOptions options, ServerModel model, IEventLog log)
    : IAsyncDisposable
{
    private readonly StreamConnectionServer _connections = new(source, options, model, log);

    public string Endpoint => listener.Endpoint;

    public long ConnectionsServed => _connections.ConnectionsServed;
    public long ConnectionsFailed => _connections.ConnectionsFailed;

    /// <summary>Accepts until cancelled, then waits for the open connections to end.</summary>
    public Task RunAsync(CancellationToken cancellationToken) =>
        new AcceptLoop(listener, options.MaxConnections, log: log).RunAsync(async (client, slot, token) =>
        {
            // With TLS the handshake comes first, on the connection's own task and within HandshakeTimeout, holding no client's slot;
            // a refusal is then told inside it.
            var handshake = options.HandshakeTimeout < options.ConnectionTimeout ? options.HandshakeTimeout : options.ConnectionTimeout;
            await using var secured = options.Tls is { } tls ? await TlsStreams.AcceptAsync(client, tls, handshake, log, token).ConfigureAwait(false) : null;
            if (options.Tls is not null && secured is null)
                return;
            var connection = secured ?? client;
            await (slot.TryTake() ? _connections.ServeAsync(connection, token) : _connections.RefuseAsync(connection)).ConfigureAwait(false);
        }, cancellationToken);

    public ValueTask DisposeAsync() => listener.DisposeAsync();
}
