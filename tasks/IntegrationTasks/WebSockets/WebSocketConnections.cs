using System.Net;
using System.Net.WebSockets;
using System.Text;
using IntegrationTasks.Streams;

namespace IntegrationTasks.WebSockets;

/// <summary>The WebSocket transport's endpoint and limits, shared by its client and its server module.</summary>
public static class WebSocketProtocol
{
    public const string Path = "/records/ws";

    /// <summary>Pings every this many seconds both ways; a peer that does not answer one within as long is dropped.</summary>
    public const int DefaultKeepAliveSeconds = 15;

    /// <summary>A close frame's reason carries at most 123 bytes of UTF-8 (RFC 6455, 5.5: a control frame's payload is at most 125).</summary>
    public const int MaxCloseReasonBytes = 123;

    /// <summary>The close code that says why, for an error the stream server closes a connection with.</summary>
    public static WebSocketCloseStatus CloseStatusOf(string code) => code switch
    {
        ErrorCodes.FrameTooLarge or ErrorCodes.BatchTooLarge or ErrorCodes.InvalidFrameLength => WebSocketCloseStatus.MessageTooBig,
        ErrorCodes.MalformedXml or ErrorCodes.MalformedMessage or ErrorCodes.InvalidFieldValue or ErrorCodes.TruncatedFrame => WebSocketCloseStatus.InvalidPayloadData,
        ErrorCodes.ConnectionStalled or ErrorCodes.ServerBusy => WebSocketCloseStatus.PolicyViolation,
        _ => WebSocketCloseStatus.InternalServerError,
    };

    /// <summary>"IT2101: …" cut to what a close frame carries, never inside a character.</summary>
    public static string CloseReason(IntegrationException error)
    {
        var text = CodedError.Format(error);
        if (Encoding.UTF8.GetByteCount(text) <= MaxCloseReasonBytes)
            return text;
        const string ellipsis = "…";
        var budget = MaxCloseReasonBytes - Encoding.UTF8.GetByteCount(ellipsis);
        var length = text.Length;
        while (Encoding.UTF8.GetByteCount(text.AsSpan(0, length)) > budget || char.IsHighSurrogate(text[length - 1]))
            length--;
        return text[..length] + ellipsis;
    }
}

/// <summary>A WebSocket as a stream connection the stream models read and write, on either side.</summary>
public static class WebSocketConnections
{
    public static StreamConnection Of(WebSocket socket, string peer)
    {
        var stream = new WebSocketByteStream(socket);
        return new StreamConnection(stream, peer, stream.ShutdownSend, socket: null, stream.CloseWithErrorAsync);
    }
}

/// <summary>
/// A WebSocket read and written as a byte stream: each write is one binary message (a request, or a slice of a reply), reads run
/// across message ends (the suite's frames carry their own lengths). The peer's close with a coded reason is read as that error; a
/// WebSocket that breaks is a lost connection (IT3006), which a resuming client reconnects after. Disposing closes the WebSocket with
/// the close handshake (within 5 s), then releases it.
/// A read the caller gives up on (a stall guard's deadline) leaves the WebSocket open: cancelling a WebSocket's receive would abort
/// it, and the close frame that tells the peer why (1008 and IT3007) could no longer be sent. So the receive runs uncancelled into a
/// buffer of the stream's own, and the caller stops waiting for it; the next read, or the close handshake, takes it up.
/// </summary>
internal sealed class WebSocketByteStream(WebSocket socket) : Stream
{
    private static readonly TimeSpan CloseTimeout = TimeSpan.FromSeconds(5);
    private readonly byte[] _received = new byte[64 * 1024];
    private Task<ValueWebSocketReceiveResult>? _receiving;
    private ReadOnlyMemory<byte> _unread;
    private bool _closeReceived;

    /// <summary>What aborted the socket, where this side knows: a write its caller cancelled (a write deadline), or a failure seen first.</summary>
    private string? _abortedBy;

    public override bool CanRead => true;
    public override bool CanWrite => true;
    public override bool CanSeek => false;
    public override long Length => throw new NotSupportedException();
    public override long Position { get => throw new NotSupportedException(); set => throw new NotSupportedException(); }

    public override async ValueTask<int> ReadAsync(Memory<byte> buffer, CancellationToken cancellationToken = default)
    {
        if (buffer.IsEmpty)
            return 0;
        while (_unread.IsEmpty)
        {
            if (_closeReceived)
                return 0;
            ValueWebSocketReceiveResult result;
            try
            {
                _receiving ??= socket.ReceiveAsync(_received.AsMemory(), CancellationToken.None).AsTask();
                result = await _receiving.WaitAsync(cancellationToken).ConfigureAwait(false);
                _receiving = null;
            }
            catch (Exception e) when (IsBreak(e, cancellationToken))
            {
                _receiving = null;
                throw Lost(e);
            }
            switch (result.MessageType)
            {
                case WebSocketMessageType.Close:
                    _closeReceived = true;
                    if (socket.CloseStatus is { } status and not WebSocketCloseStatus.NormalClosure and not WebSocketCloseStatus.Empty)
                        throw ClosedWith(status, socket.CloseStatusDescription);
                    return 0;
                case WebSocketMessageType.Text:
                    throw new IntegrationException(ErrorCodes.MalformedMessage, "A text message came where this protocol sends binary ones (the suite's frames).");
                default:
                    _unread = _received.AsMemory(0, result.Count); // an empty fragment: read on
                    break;
            }
        }
        var count = Math.Min(buffer.Length, _unread.Length);
        _unread[..count].CopyTo(buffer);
        _unread = _unread[count..];
        return count;
    }

    public override async ValueTask WriteAsync(ReadOnlyMemory<byte> buffer, CancellationToken cancellationToken = default)
    {
        try
        {
            await socket.SendAsync(buffer, WebSocketMessageType.Binary, endOfMessage: true, cancellationToken).ConfigureAwait(false);
        }
        catch (Exception e) when (IsBreak(e, cancellationToken))
        {
            throw Lost(e);
        }
        catch (OperationCanceledException) when (cancellationToken.IsCancellationRequested)
        {
            // A send cancelled part way aborts the socket: what later operations meet is this, not the peer.
            _abortedBy ??= "a write to the peer was given up (its deadline passed)";
            throw;
        }
    }

    public override Task<int> ReadAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken) =>
        ReadAsync(buffer.AsMemory(offset, count), cancellationToken).AsTask();

    public override Task WriteAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken) =>
        WriteAsync(buffer.AsMemory(offset, count), cancellationToken).AsTask();

    // A WebSocket has no blocking API: the stream models are async all the way, and a synchronous caller is a bug to find.
    public override int Read(byte[] buffer, int offset, int count) => throw new NotSupportedException("A WebSocket stream is read asynchronously.");
    public override void Write(byte[] buffer, int offset, int count) => throw new NotSupportedException("A WebSocket stream is written asynchronously.");

    public override void Flush()
    {
    }

    public override Task FlushAsync(CancellationToken cancellationToken) => Task.CompletedTask;
    public override long Seek(long offset, SeekOrigin origin) => throw new NotSupportedException();
    public override void SetLength(long value) => throw new NotSupportedException();

    /// <summary>Says "no more from me" with a normal close frame; the peer's remaining messages are still read.</summary>
    public void ShutdownSend() => _ = CloseOutputAsync(WebSocketCloseStatus.NormalClosure, null);

    /// <summary>Closes with the close code that says why and the coded error as the reason, which the peer reads as that error.</summary>
    public Task CloseWithErrorAsync(IntegrationException error) =>
        CloseOutputAsync(WebSocketProtocol.CloseStatusOf(error.Code), WebSocketProtocol.CloseReason(error));

    private async Task CloseOutputAsync(WebSocketCloseStatus status, string? reason)
    {
        if (socket.State is not (WebSocketState.Open or WebSocketState.CloseReceived))
            return;
        using var timeout = new CancellationTokenSource(CloseTimeout);
        try
        {
            await socket.CloseOutputAsync(status, reason, timeout.Token).ConfigureAwait(false);
        }
        catch (Exception e) when (e is WebSocketException or OperationCanceledException or IOException or ObjectDisposedException)
        {
            // the peer is gone already: nothing to tell it
        }
    }

    public override async ValueTask DisposeAsync()
    {
        if (socket.State is WebSocketState.Open or WebSocketState.CloseReceived or WebSocketState.CloseSent)
        {
            using var timeout = new CancellationTokenSource(CloseTimeout);
            try
            {
                // The handshake: our close frame, then the peer's (messages still on their way are dropped). A receive left running
                // by a read given up on is the one that gets the peer's close.
                if (_receiving is null)
                    await socket.CloseAsync(WebSocketCloseStatus.NormalClosure, null, timeout.Token).ConfigureAwait(false);
                else
                {
                    if (socket.State == WebSocketState.Open)
                        await socket.CloseOutputAsync(WebSocketCloseStatus.NormalClosure, null, timeout.Token).ConfigureAwait(false);
                    while ((await _receiving.WaitAsync(timeout.Token).ConfigureAwait(false)).MessageType != WebSocketMessageType.Close)
                        _receiving = socket.ReceiveAsync(_received.AsMemory(), CancellationToken.None).AsTask();
                    // The peer's close came in that receive before ours went out: ours answers it.
                    if (socket.State == WebSocketState.CloseReceived)
                        await socket.CloseOutputAsync(WebSocketCloseStatus.NormalClosure, null, timeout.Token).ConfigureAwait(false);
                }
            }
            catch (Exception e) when (e is WebSocketException or OperationCanceledException or IOException or ObjectDisposedException or InvalidOperationException)
            {
                // a peer that does not answer the close in time is left: the socket is released below
            }
        }
        socket.Dispose();
        await base.DisposeAsync().ConfigureAwait(false);
    }

    protected override void Dispose(bool disposing)
    {
        if (disposing)
            socket.Dispose();
        base.Dispose(disposing);
    }

    /// <summary>
    /// A WebSocket error, or an operation the socket cancelled itself: a keep-alive whose pong did not come aborts the socket, and the
    /// read or write then in progress ends cancelled — with the keep-alive's error inside, or, for a receive waiting on an idle peer,
    /// with none — or later ones as in an invalid state. A cancellation the caller asked for is the caller's.
    /// </summary>
    private static bool IsBreak(Exception e, CancellationToken cancellationToken) =>
        e is WebSocketException || (e is OperationCanceledException && !cancellationToken.IsCancellationRequested);

    private IntegrationException Lost(Exception e)
    {
        var cause = e as WebSocketException ?? e.InnerException as WebSocketException;
        // A socket aborted earlier (by a failure seen first, or a send given up) fails every later operation as in an invalid state,
        // or, for a receive, as cancelled: that earlier cause is the one to tell.
        if (socket.State == WebSocketState.Aborted && cause is null or { WebSocketErrorCode: WebSocketError.InvalidState })
        {
            // Nothing on this side aborted it, and every receive here runs without a token of its own: the keep-alive gave up.
            return new(ErrorCodes.ConnectionLost, _abortedBy is { } earlier
                ? $"The WebSocket was aborted: {earlier}."
                : "The WebSocket was aborted while waiting for its peer: no pong answered its keep-alive ping in time (KeepAliveTimeout).", e);
        }
        var lost = cause is null
            ? new IntegrationException(ErrorCodes.ConnectionLost, $"The WebSocket broke ({socket.State}): {e.Message}", e)
            : new IntegrationException(ErrorCodes.ConnectionLost, $"The WebSocket broke ({cause.WebSocketErrorCode}): {cause.Message}", e);
        _abortedBy ??= $"it broke before ({(cause?.WebSocketErrorCode.ToString() ?? socket.State.ToString())}: {(cause ?? e).Message})";
        return lost;
    }

    private static IntegrationException ClosedWith(WebSocketCloseStatus status, string? reason) =>
        CodedError.TryParse(reason ?? "", out var code, out var message)
            ? new IntegrationException(code, $"The server closed the WebSocket ({(int)status} {status}): {message}")
            : new IntegrationException(ErrorCodes.ConnectionLost, $"The server closed the WebSocket ({(int)status} {status}){(string.IsNullOrEmpty(reason) ? "" : $": {reason}")}.");
}

/// <summary>Opens a WebSocket to the server's endpoint: the stream connector of the WebSocket transport.</summary>
/// <param name="token">The service's bearer token, sent with each upgrade request; null: none.</param>
public sealed class WebSocketConnector(Uri uri, TimeSpan keepAlive, Hosting.ServiceToken? token = null, System.Net.Security.SslClientAuthenticationOptions? tls = null,
    TimeSpan? handshakeTimeout = null) : IStreamConnector, IDisposable
{
    /// <summary>
    /// Over wss://, the handler whose TLS trusts the server's authority alone (no callback that accepts anything): one for the
    /// connector's connections, kept while they live (an upgraded connection is its own, not the handler's pool's).
    /// </summary>
    private readonly HttpMessageInvoker? _secured = tls is null ? null
        : new HttpMessageInvoker(new SocketsHttpHandler { SslOptions = tls, ConnectTimeout = handshakeTimeout ?? TimeSpan.FromSeconds(30) });

    public string Endpoint => uri.ToString();

    public void Dispose() => _secured?.Dispose();

    public async Task<StreamConnection> ConnectAsync(string serverTarget, CancellationToken cancellationToken)
    {
        var socket = new ClientWebSocket();
        socket.Options.KeepAliveInterval = keepAlive;
        socket.Options.KeepAliveTimeout = keepAlive;
        socket.Options.CollectHttpResponseDetails = true; // a refusal's status (503 at the connection limit) is read below
        if (token is not null)
            socket.Options.SetRequestHeader("Authorization", token.AuthorizationHeader);
        try
        {
            await (_secured is null ? socket.ConnectAsync(uri, cancellationToken) : socket.ConnectAsync(uri, _secured, cancellationToken)).ConfigureAwait(false);
            return WebSocketConnections.Of(socket, Endpoint);
        }
        catch (WebSocketException e) when (TlsConnector.HandshakeRefusal(e) is { } refused)
        {
            socket.Dispose();
            throw new IntegrationException(ErrorCodes.TlsRefused, $"TLS with {uri.Authority} failed: {refused.Message}", e);
        }
        catch (WebSocketException e)
        {
            var status = socket.HttpStatusCode;
            socket.Dispose();
            throw status switch
            {
                HttpStatusCode.Unauthorized => new IntegrationException(ErrorCodes.CredentialsRefused, token is null
                    ? $"The WebSocket server at {uri} refused the upgrade (401): it takes only requests with its bearer token (TokenFile)."
                    : $"The WebSocket server at {uri} refused the upgrade (401): the token in TokenFile is not its own."),
                HttpStatusCode.ServiceUnavailable => new IntegrationException(ErrorCodes.ServerBusy,
                    $"The WebSocket server at {uri} refused the connection (503): it serves the most clients it takes at once; try again later."),
                (HttpStatusCode)0 when uri.Scheme == "ws" && EndedUnanswered(e) => new IntegrationException(ErrorCodes.TlsRefused,
                    $"The server at {uri.Authority} took the connection and ended it without answering the WebSocket upgrade: does it serve wss:// only (Tls=true)?", e),
                (HttpStatusCode)0 => new IntegrationException(ErrorCodes.ConnectionFailed,
                    $"Cannot connect to {uri} ({e.Message}). Is the server running? Start it with: dotnet msbuild build.proj -t:{serverTarget}", e),
                _ => new IntegrationException(ErrorCodes.RequestRefused,
                    $"The server at {uri} answered {(int)status} {status} to the WebSocket upgrade (is it the WebSocket endpoint, {WebSocketProtocol.Path}?).", e),
            };
        }
        catch
        {
            socket.Dispose();
            throw;
        }
    }

    /// <summary>The connection was made and then ended before any answer (as a TLS-only server ends a plaintext client's), not refused.</summary>
    private static bool EndedUnanswered(Exception e)
    {
        for (Exception? inner = e; inner is not null; inner = inner.InnerException)
        {
            if (inner is System.Net.Sockets.SocketException)
                return false;
            if (inner is HttpRequestException { HttpRequestError: HttpRequestError.ResponseEnded or HttpRequestError.InvalidResponse })
                return true;
        }
        return false;
    }
}
