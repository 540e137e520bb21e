using System.Net;
using System.Net.Sockets;
using System.ServiceModel.Channels;
using System.Xml;
using IntegrationTasks.Streams;

namespace IntegrationTasks.Wcf.NetTcp;

public sealed record NetTcpOptions
{
    public string BindAddress { get; init; } = SettingDefaults.BindAddress;
    public int Port { get; init; } = 8084;

    /// <summary>The largest envelope accepted; a larger declared size is refused before it is read.</summary>
    public int MaxMessageBytes { get; init; } = 64 * 1024 * 1024;

    /// <summary>Requests of one connection being answered at once; the connection is not read further meanwhile (back-pressure).</summary>
    public int MaxPendingRequests { get; init; } = 8;

    /// <summary>A connection that sends no complete record for this long (idle, or stalled mid-record) is dropped (IT3007).</summary>
    public TimeSpan ConnectionTimeout { get; init; } = TimeSpan.FromSeconds(120);

    /// <summary>TLS (1.2 or 1.3) by net.tcp's stream upgrade, with these; null: security None only (an upgrade is refused with a fault).</summary>
    public System.Net.Security.SslServerAuthenticationOptions? Tls { get; init; }

    /// <summary>Connections served at once; each call of one more is answered with a fault carrying IT3008 (until the client closes it).</summary>
    public int MaxConnections { get; init; } = 100;
}

/// <summary>
/// A net.tcp endpoint of our own, for WCF's NetTcpBinding with security None: the .NET Message Framing
/// records (duplex session mode) are ours (<see cref="MessageFraming"/>); the envelopes are read and written
/// by WCF's own binary session encoder (System.ServiceModel.Primitives), one per session, and dispatched to
/// the service by <see cref="NetTcpDispatcher"/>. With <see cref="NetTcpOptions.Tls"/>, transport security by
/// the stream upgrade to TLS (<c>application/ssl-tls</c>), and nothing in plaintext. Not implemented: other upgrades, streamed transfer, one-way operations, other modes and encodings — each is refused with a framing fault.
/// A connection that breaks the protocol is answered with a fault record, closed, and logged with a code;
/// the other connections go on.
/// </summary>
public sealed class NetTcpServiceHost(IIntegrationTestsService service, NetTcpOptions options, IEventLog log)
{
    private readonly NetTcpOptions _options = options;
    private readonly IEventLog _log = log;
    private readonly NetTcpDispatcher _dispatcher = new(service);
    private readonly MessageEncoderFactory _encoders = CreateEncoderFactory(options.MaxMessageBytes);
    private readonly BufferManager _buffers = BufferManager.CreateBufferManager(16L * 1024 * 1024, options.MaxMessageBytes);
    private TcpStreamListener? _listener;
    private long _failedConnections;

    public long ConnectionsFailed => Interlocked.Read(ref _failedConnections);

    public static MessageEncoderFactory CreateEncoderFactory(int maxMessageBytes) => new BinaryMessageEncodingBindingElement
    {
        MessageVersion = MessageVersion.Soap12WSAddressing10,
        ReaderQuotas = new XmlDictionaryReaderQuotas
        {
            MaxArrayLength = maxMessageBytes, MaxStringContentLength = maxMessageBytes, MaxDepth = 32, MaxBytesPerRead = 64 * 1024,
            MaxNameTableCharCount = 16 * 1024,
        },
    }.CreateMessageEncoderFactory();

    public IPEndPoint Start()
    {
        _listener = new TcpStreamListener(_options.BindAddress, _options.Port);
        return _listener.LocalEndPoint;
    }

    /// <summary>Accepts until cancelled, then closes the open connections and waits for them.</summary>
    public Task RunAsync(CancellationToken cancellationToken) =>
        new AcceptLoop(_listener ?? throw new InvalidOperationException("Start the endpoint first."), _options.MaxConnections, log: _log).RunAsync(ServeAsync, cancellationToken);

    private async Task ServeAsync(StreamConnection client, AcceptLoop.ConnectionSlot slot, CancellationToken cancellationToken)
    {
        // net.tcp's TLS comes after its preamble, inside the protocol: the slot is taken at once, as before any of it.
        var overLimit = !slot.TryTake();
        var peer = client.Peer;
        var stream = client.Stream;
        // Over the limit, the client still gets a session, so that its first call can be answered with a fault it reports by code.
        var refusal = overLimit
            ? $"{_options.MaxConnections} clients are being served, the most this server takes at once (MaxConnections); try again later."
            : null;
        if (refusal is not null)
            _log.Warning(ErrorCodes.ServerBusy, $"Refused the net.tcp connection from {peer}: {refusal}");
        var connection = new Connection(this, stream, refusal);
        try
        {
            await connection.RunAsync(cancellationToken).ConfigureAwait(false);
            _log.Info($"net.tcp connection from {peer} finished.");
        }
        catch (OperationCanceledException) when (cancellationToken.IsCancellationRequested)
        {
        }
        catch (FramingException e)
        {
            Interlocked.Increment(ref _failedConnections);
            _log.Warning(e.Code, $"Closed the net.tcp connection from {peer} with a framing fault ({e.Fault}): {e.Message}");
            await connection.TryWriteAsync(MessageFraming.FaultRecord(e.Fault)).ConfigureAwait(false);
        }
        catch (IntegrationException e)
        {
            Interlocked.Increment(ref _failedConnections);
            _log.Warning(e.Code, $"Closed the net.tcp connection from {peer}: {e.Message}");
            if (e is PeerStoppedReadingException)
                client.Reset();
        }
        catch (Exception e) when (e is IOException or SocketException or ObjectDisposedException)
        {
            Interlocked.Increment(ref _failedConnections);
            _log.Warning(ErrorCodes.ConnectionLost, $"The net.tcp connection from {peer} broke: {e.Message}");
        }
        catch (Exception e)
        {
            Interlocked.Increment(ref _failedConnections);
            _log.Warning(ErrorCodes.Unexpected, $"Closed the net.tcp connection from {peer} after an unexpected error: {e}");
        }
    }

    /// <summary>One connection: sessions one after another (the client pools connections and starts a new preamble after an End).</summary>
    private sealed class Connection(NetTcpServiceHost host, Stream stream, string? refusal)
    {
        private FramingReader _reader = new(new BufferedStream(stream, 16 * 1024));
        private Stream _stream = stream;

        /// <summary>The connection itself: each session's TLS is over it, and ends with the session.</summary>
        private readonly Stream _raw = stream;
        private readonly SemaphoreSlim _writeLock = new(1, 1);
        private readonly StallGuard _guard = new(host._options.ConnectionTimeout);
        private const int WriteSlice = 64 * 1024;

        public async Task RunAsync(CancellationToken cancellationToken)
        {
            while (true)
            {
                var first = await WithinTimeoutAsync(_reader.ReadByteOrEndAsync, "preamble", cancellationToken).ConfigureAwait(false);
                if (first < 0)
                    return; // closed between sessions: a clean goodbye
                if (first != MessageFraming.Version)
                    throw new FramingException(ErrorCodes.MalformedMessage, $"Record type {first} where a preamble's version record was expected (not a net.tcp client?).",
                        MessageFraming.UnsupportedVersionFault);
                var (via, upgrade) = await WithinTimeoutAsync(token => new ValueTask<(string, string?)>(_reader.ReadPreambleAsync(token)), "preamble", cancellationToken).ConfigureAwait(false);
                if (upgrade is not null)
                    await UpgradeAsync(upgrade, cancellationToken).ConfigureAwait(false);
                else if (host._options.Tls is not null && _stream is not System.Net.Security.SslStream)
                    throw new FramingException(ErrorCodes.TlsRefused, "A plaintext session at a TLS endpoint: this server takes net.tcp with transport security only.",
                        MessageFraming.UpgradeInvalidFault);
                if (!Uri.TryCreate(via, UriKind.Absolute, out var uri) || uri.Scheme != "net.tcp"
                    || !string.Equals(uri.AbsolutePath.TrimEnd('/'), ServiceNames.NetTcpPath, StringComparison.OrdinalIgnoreCase))
                    throw new FramingException(ErrorCodes.InvalidParameter, $"No service at '{via}' (this endpoint serves net.tcp://…{ServiceNames.NetTcpPath}).",
                        MessageFraming.EndpointNotFoundFault);
                await WriteAsync([MessageFraming.PreambleAck], cancellationToken).ConfigureAwait(false);
                await RunSessionAsync(host._encoders.CreateSessionEncoder(), cancellationToken).ConfigureAwait(false);
                // A session's TLS ends with it: WCF pools the raw connection and sends the next preamble, and its own upgrade, in
                // plaintext on it (with TLS set, that next session is upgraded again or refused).
                if (_stream is System.Net.Security.SslStream secured)
                {
                    await secured.DisposeAsync().ConfigureAwait(false);
                    _stream = _raw;
                    _reader = new FramingReader(new BufferedStream(_raw, 16 * 1024));
                }
            }
        }

        /// <summary>
        /// net.tcp's transport security: the upgrade answered, TLS on the connection within the connection timeout, then the rest of the
        /// preamble and every record after it over TLS. A failed handshake is IT3009 (the client's own refusal, or one it caused).
        /// </summary>
        private async Task UpgradeAsync(string upgrade, CancellationToken cancellationToken)
        {
            if (upgrade != MessageFraming.SslTlsUpgrade || host._options.Tls is not { } tls || _stream is System.Net.Security.SslStream)
                throw new FramingException(ErrorCodes.MalformedMessage,
                    host._options.Tls is null ? "Transport security (a stream upgrade) is not served here: Tls=false (use SecurityMode.None)."
                    : $"The upgrade '{upgrade}' is not served (only {MessageFraming.SslTlsUpgrade}, once).", MessageFraming.UpgradeInvalidFault);
            await WriteAsync([MessageFraming.UpgradeResponse], cancellationToken).ConfigureAwait(false);
            var secured = new System.Net.Security.SslStream(_raw, leaveInnerStreamOpen: true);
            using (var deadline = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken))
            {
                deadline.CancelAfter(host._options.ConnectionTimeout);
                try
                {
                    await secured.AuthenticateAsServerAsync(tls, deadline.Token).ConfigureAwait(false);
                }
                catch (Exception e) when (e is System.Security.Authentication.AuthenticationException or IOException or OperationCanceledException && !cancellationToken.IsCancellationRequested)
                {
                    await secured.DisposeAsync().ConfigureAwait(false);
                    throw new IntegrationException(ErrorCodes.TlsRefused, $"The TLS handshake of net.tcp's upgrade failed: {e.Message}");
                }
            }
            _stream = secured;
            _reader = new FramingReader(new BufferedStream(secured, 16 * 1024));
            await WithinTimeoutAsync(async token =>
            {
                await _reader.ReadPreambleEndAsync(token).ConfigureAwait(false);
                return true;
            }, "preamble", cancellationToken).ConfigureAwait(false);
        }

        private async Task RunSessionAsync(MessageEncoder encoder, CancellationToken serverToken)
        {
            using var slots = new SemaphoreSlim(host._options.MaxPendingRequests, host._options.MaxPendingRequests);
            // An answer that fails (its client stopped reading) ends the session: the reading loop may be waiting for a slot.
            using var session = CancellationTokenSource.CreateLinkedTokenSource(serverToken);
            var cancellationToken = session.Token;
            var answering = new List<Task>();
            try
            {
                while (true)
                {
                    await slots.WaitAsync(cancellationToken).ConfigureAwait(false);
                    // The clock runs only while the server waits for the client (not while all its slots are answering).
                    var type = await WithinTimeoutAsync(_reader.ReadByteOrEndAsync, "record", cancellationToken).ConfigureAwait(false);
                    if (type < 0)
                        throw new IntegrationException(ErrorCodes.ConnectionLost, "The client closed the connection inside a session, without an End record.");
                    if (type == MessageFraming.End)
                    {
                        await Task.WhenAll(answering).ConfigureAwait(false);
                        await WriteAsync([MessageFraming.End], cancellationToken).ConfigureAwait(false);
                        return;
                    }
                    if (type != MessageFraming.SizedEnvelope)
                        throw new FramingException(ErrorCodes.MalformedMessage, $"Record type {type} inside a session (a sized envelope or an End was expected).",
                            MessageFraming.ContentTypeInvalidFault);
                    var request = await WithinTimeoutAsync(token => new ValueTask<Message>(ReadRequestAsync(encoder, token)), "envelope", cancellationToken)
                        .ConfigureAwait(false);
                    if (refusal is not null)
                    {
                        // Every call of the session gets the refusal (a client with several calls in flight sees it on each, not a
                        // closed session); the client ends the session, or the connection timeout does.
                        await RefuseAsync(encoder, request, refusal, cancellationToken).ConfigureAwait(false);
                        slots.Release();
                        continue;
                    }
                    answering.RemoveAll(t => t.IsCompletedSuccessfully);
                    answering.Add(AnswerAsync(encoder, request, slots, session, cancellationToken));
                }
            }
            catch (OperationCanceledException) when (!serverToken.IsCancellationRequested && answering.Any(t => t.IsFaulted))
            {
                // The answer's own error says why (below); this wait was only cut short by it.
            }
            finally
            {
                // A session that ends badly still lets its answers finish before the connection is closed.
                await Task.WhenAll(answering).ConfigureAwait(false);
            }
        }

        /// <summary>One read of the client's, bounded by ConnectionTimeout: a client idle or stalled mid-record that long is dropped with IT3007.</summary>
        private async ValueTask<T> WithinTimeoutAsync<T>(Func<CancellationToken, ValueTask<T>> read, string what, CancellationToken cancellationToken)
        {
            try
            {
                return await _guard.WithinAsync(read,
                    () => $"No complete {what} within {host._options.ConnectionTimeout.TotalSeconds:0.###} s (ConnectionTimeoutSeconds): the connection is dropped.",
                    cancellationToken).ConfigureAwait(false);
            }
            catch (IntegrationException e) when (e.Code == ErrorCodes.ConnectionStalled && _writeLock.CurrentCount == 0)
            {
                // The read guard can speak before the write guard: either way, a reply is stuck behind a client that does not read.
                throw StoppedReading();
            }
        }

        private PeerStoppedReadingException StoppedReading() =>
            new($"The client read nothing for {host._options.ConnectionTimeout.TotalSeconds:0.###} s (it stopped reading its replies; ConnectionTimeoutSeconds): the connection is reset.");

        private async Task<Message> ReadRequestAsync(MessageEncoder encoder, CancellationToken cancellationToken)
        {
            var size = await _reader.ReadSizeAsync(cancellationToken).ConfigureAwait(false);
            if (size == 0)
                throw new FramingException(ErrorCodes.MalformedXml, "An empty envelope (size 0) is not a binary SOAP message.", MessageFraming.ContentTypeInvalidFault);
            if (size > host._options.MaxMessageBytes)
                throw new FramingException(ErrorCodes.FrameTooLarge, $"An envelope of {size:N0} bytes is over the limit of {host._options.MaxMessageBytes:N0}.",
                    MessageFraming.MaxMessageSizeExceededFault);
            var buffer = host._buffers.TakeBuffer(size);
            await _reader.ReadExactlyAsync(buffer.AsMemory(0, size), cancellationToken).ConfigureAwait(false);
            try
            {
                // The message owns the buffer from here and gives it back to the buffer manager when closed.
                var message = encoder.ReadMessage(new ArraySegment<byte>(buffer, 0, size), host._buffers);
                _ = message.Headers.Action; // the headers are read here, so that a broken envelope is refused here
                return message;
            }
            // Whatever WCF's decoder throws on bytes it cannot read is a malformed envelope: on some broken input it reaches its
            // message logging, which is not implemented in the .NET client libraries (NotImplementedException), or worse.
            catch (Exception e) when (e is not OperationCanceledException and not OutOfMemoryException)
            {
                throw new FramingException(ErrorCodes.MalformedXml, $"An envelope of {size:N0} bytes is not a binary SOAP message: {e.Message}",
                    MessageFraming.ContentTypeInvalidFault);
            }
        }

        private async Task AnswerAsync(MessageEncoder encoder, Message message, SemaphoreSlim slots, CancellationTokenSource session,
            CancellationToken cancellationToken)
        {
            try
            {
                await Task.Yield(); // answered off the reading loop, which goes on to the next request
                Message reply;
                using (message)
                {
                    try
                    {
                        reply = await host._dispatcher.AnswerAsync(NetTcpDispatcher.Read(message)).ConfigureAwait(false);
                    }
                    catch (IntegrationException e)
                    {
                        host._log.Warning(e.Code, $"Refused a net.tcp request with a fault: {e.Message}");
                        reply = NetTcpDispatcher.Fault(message.Version, message.Headers.MessageId, CodedError.Format(e));
                    }
                }
                using (reply)
                    await WriteMessageAsync(encoder, reply, cancellationToken).ConfigureAwait(false);
            }
            catch (Exception e) when (e is not OperationCanceledException)
            {
                await session.CancelAsync().ConfigureAwait(false);
                throw;
            }
            finally
            {
                slots.Release();
            }
        }

        /// <summary>A call on a connection over MaxConnections: answered with a fault carrying IT3008.</summary>
        private async Task RefuseAsync(MessageEncoder encoder, Message request, string reason, CancellationToken cancellationToken)
        {
            using (request)
            using (var fault = NetTcpDispatcher.Fault(request.Version, request.Headers.MessageId, CodedError.Format(ErrorCodes.ServerBusy, reason)))
                await WriteMessageAsync(encoder, fault, cancellationToken).ConfigureAwait(false);
        }

        private async Task WriteMessageAsync(MessageEncoder encoder, Message reply, CancellationToken cancellationToken)
        {
            await _writeLock.WaitAsync(cancellationToken).ConfigureAwait(false);
            try
            {
                // Encoded under the lock: the session encoder's dictionary must see messages in the order they go out.
                // Room is left before the envelope for its record header, so that both go out in one write.
                var envelope = encoder.WriteMessage(reply, int.MaxValue, host._buffers, MessageFraming.MaxHeaderBytes);
                try
                {
                    var header = MessageFraming.SizedEnvelopeHeader(envelope.Count);
                    var start = envelope.Offset - header.Length;
                    header.CopyTo(envelope.Array!, start);
                    await WriteWithinTimeoutAsync(envelope.Array.AsMemory(start, header.Length + envelope.Count), cancellationToken).ConfigureAwait(false);
                }
                finally
                {
                    host._buffers.ReturnBuffer(envelope.Array!);
                }
            }
            finally
            {
                _writeLock.Release();
            }
        }

        private async Task WriteAsync(byte[] record, CancellationToken cancellationToken)
        {
            await _writeLock.WaitAsync(cancellationToken).ConfigureAwait(false);
            try
            {
                await WriteWithinTimeoutAsync(record, cancellationToken).ConfigureAwait(false);
            }
            finally
            {
                _writeLock.Release();
            }
        }

        /// <summary>
        /// Writes in 64 KB slices, each within ConnectionTimeout: a client that reads nothing that long — it sends requests and never
        /// reads the replies — is dropped (IT3007), while one that reads slowly but steadily is never cut. Before, its writes blocked
        /// forever, holding the write lock and every answering slot.
        /// </summary>
        private async Task WriteWithinTimeoutAsync(ReadOnlyMemory<byte> bytes, CancellationToken cancellationToken)
        {
            using var deadline = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
            try
            {
                for (var offset = 0; offset < bytes.Length; offset += WriteSlice)
                {
                    deadline.CancelAfter(host._options.ConnectionTimeout);
                    await _stream.WriteAsync(bytes.Slice(offset, Math.Min(WriteSlice, bytes.Length - offset)), deadline.Token).ConfigureAwait(false);
                }
                deadline.CancelAfter(host._options.ConnectionTimeout);
                await _stream.FlushAsync(deadline.Token).ConfigureAwait(false);
            }
            catch (OperationCanceledException) when (!cancellationToken.IsCancellationRequested)
            {
                throw StoppedReading();
            }
        }

        /// <summary>Best effort: the connection is being closed anyway.</summary>
        public async Task TryWriteAsync(byte[] record)
        {
            try
            {
                using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(5));
                await WriteAsync(record, timeout.Token).ConfigureAwait(false);
            }
            catch (Exception e) when (e is IOException or ObjectDisposedException or OperationCanceledException)
            {
            }
        }
    }
}
