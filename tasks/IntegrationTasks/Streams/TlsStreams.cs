using System.Net.Security;
using System.Security.Authentication;
using IntegrationTasks.Hosting;

namespace IntegrationTasks.Streams;

/// <summary>
/// TLS over a stream connection, either side: the handshake within a deadline, its failure a coded IT3009 (never a hang, a bare
/// AuthenticationException or IT9999). The models above see the decrypted stream and nothing else changes for them.
/// </summary>
public static class TlsStreams
{
    /// <summary>
    /// The server's side: the handshake, or null when it failed (said in one coded line) or the server is stopping (said in none); the
    /// connection is left to be closed. Never throws: a connection's failure is never the server's.
    /// </summary>
    public static async Task<StreamConnection?> AcceptAsync(StreamConnection client, SslServerAuthenticationOptions options, TimeSpan timeout,
        IEventLog log, CancellationToken cancellationToken)
    {
        var tls = new SslStream(client.Stream, leaveInnerStreamOpen: true);
        using var deadline = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        deadline.CancelAfter(timeout);
        try
        {
            await tls.AuthenticateAsServerAsync(options, deadline.Token).ConfigureAwait(false);
            return Secured(client, tls);
        }
        catch (Exception e)
        {
            await tls.DisposeAsync().ConfigureAwait(false);
            if (!cancellationToken.IsCancellationRequested)
                log.Warning(e is AuthenticationException || deadline.IsCancellationRequested ? ErrorCodes.TlsRefused : ErrorCodes.ConnectionLost,
                    $"Refused the connection from {client.Peer}: {Reason(e, deadline.IsCancellationRequested, timeout)}");
            return null;
        }
    }

    /// <summary>
    /// Whether nothing came over <paramref name="connection"/>'s TLS after its handshake: a .NET client checks the certificate after its
    /// side of the handshake is done, and one that refuses it closes at once, which is all the server sees of it.
    /// </summary>
    public static bool NothingReadAfterHandshake(StreamConnection connection) => connection.Stream is OwningTlsStream { BytesRead: 0 };

    /// <summary>The client's side: the server's certificate checked against the one authority it trusts and the name it was reached by.</summary>
    public static async Task<StreamConnection> ConnectAsync(StreamConnection server, SslClientAuthenticationOptions options, TimeSpan timeout,
        CancellationToken cancellationToken)
    {
        var tls = new SslStream(server.Stream, leaveInnerStreamOpen: true);
        using var deadline = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        deadline.CancelAfter(timeout);
        try
        {
            await tls.AuthenticateAsClientAsync(options, deadline.Token).ConfigureAwait(false);
            return Secured(server, tls);
        }
        catch (Exception e) when (e is AuthenticationException || (deadline.IsCancellationRequested && !cancellationToken.IsCancellationRequested))
        {
            await tls.DisposeAsync().ConfigureAwait(false);
            throw new IntegrationException(ErrorCodes.TlsRefused, $"TLS with {server.Peer} ({options.TargetHost}) failed: {Reason(e, deadline.IsCancellationRequested, timeout)}", e);
        }
        catch (IOException e)
        {
            // Reset or closed during the handshake (a server going down, a relay's fault): a break to reconnect after, not a refusal.
            await tls.DisposeAsync().ConfigureAwait(false);
            throw new IntegrationException(ErrorCodes.ConnectionFailed,
                $"The connection to {server.Peer} ended during the TLS handshake (a server that does not speak TLS, or one going down): {e.Message}", e);
        }
        catch
        {
            await tls.DisposeAsync().ConfigureAwait(false);
            throw;
        }
    }

    /// <summary>The connection carried by <paramref name="tls"/>: the socket beneath kept for what works on sockets (a reset, the relay).</summary>
    private static StreamConnection Secured(StreamConnection plain, SslStream tls) =>
        new(new OwningTlsStream(tls, plain.Stream), plain.Peer, plain.ShutdownSend, plain.Socket, plain.CloseWithErrorAsync, tls: true);

    private static string Reason(Exception e, bool timedOut, TimeSpan timeout) => timedOut && e is OperationCanceledException
        ? $"no TLS handshake within {timeout.TotalSeconds:0.#} s (a plaintext peer, or none at all)."
        : e switch
        {
            AuthenticationException { InnerException: { } inner } => $"{e.Message} ({inner.Message})",
            IOException { InnerException: null } => $"the peer ended the connection during the TLS handshake ({e.Message}); is it speaking TLS?",
            _ => e.Message,
        };

    /// <summary>
    /// The TLS stream, disposing the plaintext stream beneath it too (the connection owns both). A connection that ends inside a TLS
    /// record is SslStream's bare IOException: told as the socket's reset it is, so that it reads as the disconnect it is everywhere.
    /// </summary>
    private sealed class OwningTlsStream(SslStream tls, Stream inner) : Stream
    {
        private long _bytesRead;

        public long BytesRead => Interlocked.Read(ref _bytesRead);

        public override bool CanRead => true;
        public override bool CanWrite => true;
        public override bool CanSeek => false;
        public override long Length => throw new NotSupportedException();
        public override long Position { get => throw new NotSupportedException(); set => throw new NotSupportedException(); }

        public override async ValueTask<int> ReadAsync(Memory<byte> buffer, CancellationToken cancellationToken = default)
        {
            try
            {
                var read = await tls.ReadAsync(buffer, cancellationToken).ConfigureAwait(false);
                Interlocked.Add(ref _bytesRead, read);
                return read;
            }
            catch (IOException e) when (e.InnerException is null)
            {
                throw new IOException(e.Message, new System.Net.Sockets.SocketException((int)System.Net.Sockets.SocketError.ConnectionReset));
            }
        }
        public override ValueTask WriteAsync(ReadOnlyMemory<byte> buffer, CancellationToken cancellationToken = default) => tls.WriteAsync(buffer, cancellationToken);
        public override Task<int> ReadAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken) =>
            ReadAsync(buffer.AsMemory(offset, count), cancellationToken).AsTask();
        public override Task WriteAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken) => tls.WriteAsync(buffer, offset, count, cancellationToken);
        public override int Read(byte[] buffer, int offset, int count) => ReadAsync(buffer.AsMemory(offset, count)).AsTask().GetAwaiter().GetResult();
        public override void Write(byte[] buffer, int offset, int count) => tls.Write(buffer, offset, count);
        public override Task FlushAsync(CancellationToken cancellationToken) => tls.FlushAsync(cancellationToken);
        public override void Flush() => tls.Flush();
        public override long Seek(long offset, SeekOrigin origin) => throw new NotSupportedException();
        public override void SetLength(long value) => throw new NotSupportedException();

        public override async ValueTask DisposeAsync()
        {
            await tls.DisposeAsync().ConfigureAwait(false);
            await inner.DisposeAsync().ConfigureAwait(false);
            await base.DisposeAsync().ConfigureAwait(false);
        }

        protected override void Dispose(bool disposing)
        {
            if (disposing)
            {
                tls.Dispose();
                inner.Dispose();
            }
            base.Dispose(disposing);
        }
    }
}

/// <summary>A connector whose connections carry TLS: the inner connector's, then the handshake (IT3009 when it fails).</summary>
public sealed class TlsConnector(IStreamConnector inner, SslClientAuthenticationOptions options, TimeSpan handshakeTimeout) : IStreamConnector
{
    public string Endpoint => inner.Endpoint + " (TLS)";

    public async Task<StreamConnection> ConnectAsync(string serverTarget, CancellationToken cancellationToken)
    {
        var plain = await inner.ConnectAsync(serverTarget, cancellationToken).ConfigureAwait(false);
        try
        {
            return await TlsStreams.ConnectAsync(plain, options, handshakeTimeout, cancellationToken).ConfigureAwait(false);
        }
        catch
        {
            await plain.DisposeAsync().ConfigureAwait(false);
            throw;
        }
    }

    /// <summary>An HTTP client's handler made to trust the authority in <paramref name="tlsFolder"/> alone, its handshake bounded (it is part of the connect).</summary>
    public static void Secure(System.Net.Http.SocketsHttpHandler handler, string tlsFolder, string serverName, int timeoutSeconds, bool clientCertificate = false)
    {
        handler.SslOptions = TrustingFolder(tlsFolder, serverName, clientCertificate);
        handler.ConnectTimeout = TlsCertificates.HandshakeTimeout(timeoutSeconds);
    }

    /// <summary>The options of a client that trusts the authority in <paramref name="tlsFolder"/> and reaches the server as <paramref name="serverName"/>.</summary>
    /// <param name="clientCertificate">Mutual TLS: also present the folder's client certificate.</param>
    public static SslClientAuthenticationOptions TrustingFolder(string tlsFolder, string serverName, bool clientCertificate = false) =>
        TlsCertificates.ClientOptions(serverName, AuthorityIn(tlsFolder), clientCertificate ? TlsCertificates.In(tlsFolder).LoadClientContext() : null);

    /// <summary>A handshake's refusal behind a client library's connect error (an untrusted, expired or misnamed certificate; no common version), if that is what it was.</summary>
    public static AuthenticationException? HandshakeRefusal(Exception? e)
    {
        for (; e is not null; e = e.InnerException)
        {
            if (e is AuthenticationException refused)
                return refused;
            if (e is AggregateException { InnerExceptions: var inner } && inner.Select(HandshakeRefusal).FirstOrDefault(r => r is not null) is { } found)
                return found;
        }
        return null;
    }

    /// <summary>The authority's certificate in <paramref name="tlsFolder"/>, what a client trusts alone; IT3009 when there is none to read.</summary>
    public static System.Security.Cryptography.X509Certificates.X509Certificate2 AuthorityIn(string tlsFolder)
    {
        var authority = Path.Combine(TlsCertificates.RequireFolder(tlsFolder), TlsCertificates.AuthorityFile);
        if (!File.Exists(authority))
            throw new IntegrationException(ErrorCodes.TlsRefused,
                $"No certificate authority at {authority} to check the server's certificate against: start the server with Tls=true first (it makes them), or point TlsFolder at its folder.");
        try
        {
            return System.Security.Cryptography.X509Certificates.X509CertificateLoader.LoadCertificateFromFile(authority);
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException or System.Security.Cryptography.CryptographicException)
        {
            throw new IntegrationException(ErrorCodes.TlsRefused, $"The certificate authority at {authority} cannot be read: {e.Message}", e);
        }
    }
}
