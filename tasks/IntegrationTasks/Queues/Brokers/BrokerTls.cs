using IntegrationTasks.Hosting;

namespace IntegrationTasks.Queues;

/// <summary>
/// How a broker the build starts listens: plaintext, over TLS, or both (a Tls=false+true build's two passes share the one broker),
/// and the certificate it serves (the suite's private authority's, made in TlsFolder for the address it is bound to).
/// </summary>
public sealed record BrokerTls(bool Plaintext, TlsCertificates? Certificates, bool ClientCertificates = false)
{
    public static readonly BrokerTls None = new(true, null);

    public bool Encrypted => Certificates is not null;

    /// <summary>
    /// The broker's listeners for the build's Tls (false, true, false+true), its certificate made when TLS is among them; with
    /// <paramref name="clientCertificates"/> its TLS clients must present a certificate from the same authority.
    /// </summary>
    public static BrokerTls For(string tls, string tlsFolder, string bindAddress, bool clientCertificates = false)
    {
        var values = TlsSetting.Values(tls);
        return values.Contains(true)
            ? new BrokerTls(values.Contains(false), TlsCertificates.Ensure(TlsCertificates.RequireFolder(tlsFolder), TlsCertificates.NamesFor(bindAddress)), clientCertificates)
            : None;
    }
}

/// <summary>
/// A broker client's TLS (the suite's clients and its servers that answer through a broker): the authority it trusts alone, and with
/// ClientCertificates the certificate it presents.
/// </summary>
public sealed record BrokerClientTls(System.Security.Cryptography.X509Certificates.X509Certificate2 Authority, System.Security.Cryptography.X509Certificates.X509Certificate2? Certificate)
{
    /// <summary>Null without TLS; the client certificate only with <paramref name="clientCertificates"/>.</summary>
    public static BrokerClientTls? For(bool tls, string tlsFolder, bool clientCertificates) =>
        tls ? new BrokerClientTls(Streams.TlsConnector.AuthorityIn(tlsFolder), clientCertificates ? TlsCertificates.In(tlsFolder).LoadClientContext().TargetCertificate : null) : null;

    /// <summary>Whether the broker's certificate chains to the authority (a library's validation callback; the sender unused).</summary>
    public bool Trusts(object? sender, System.Security.Cryptography.X509Certificates.X509Certificate? certificate, System.Security.Cryptography.X509Certificates.X509Chain? chain, System.Net.Security.SslPolicyErrors errors) =>
        certificate is System.Security.Cryptography.X509Certificates.X509Certificate2 presented && TlsCertificates.IsFromAuthority(presented, chain, errors, Authority);

    /// <summary>
    /// After a failed connect: when this client presented no certificate and the broker still takes TCP connections, it took this
    /// one and ended its TLS session, as a broker asking for client certificates does (the client's library sees only a lost
    /// connection) — IT3009 saying so; otherwise null (the broker is not there: the caller's own error).
    /// </summary>
    /// <param name="causeHidden">The library keeps the socket's error to itself (StackExchange.Redis): the probe alone decides.</param>
    public async Task<IntegrationException?> MissingCertificateAsync(string broker, string host, int port, Exception cause, CancellationToken cancellationToken,
        bool causeHidden = false)
    {
        if (Certificate is not null || !(causeHidden || EndedByPeer(cause)))
            return null;
        using var timeout = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        timeout.CancelAfter(TimeSpan.FromSeconds(2));
        try
        {
            using var probe = new System.Net.Sockets.TcpClient();
            await probe.ConnectAsync(host, port, timeout.Token).ConfigureAwait(false);
        }
        catch (Exception e) when (e is System.Net.Sockets.SocketException or OperationCanceledException)
        {
            cancellationToken.ThrowIfCancellationRequested();
            return null;
        }
        return new IntegrationException(ErrorCodes.TlsRefused,
            $"{broker} at {host}:{port} took the connection and ended its TLS session: it takes only clients presenting a certificate of its authority (ClientCertificates=true).", cause);
    }

    /// <summary>Whether the library's error was the peer ending the connection (not a timeout, not a refused connect).</summary>
    private static bool EndedByPeer(Exception? e)
    {
        for (; e is not null; e = e.InnerException)
        {
            if (e is System.Net.Sockets.SocketException { SocketErrorCode: System.Net.Sockets.SocketError.ConnectionReset or System.Net.Sockets.SocketError.ConnectionAborted }
                or EndOfStreamException || (e is IOException && e is not System.Net.Sockets.SocketException)
                || e.GetType().Name == "SocketClosedException") // NATS.Client's own: the socket read nothing more
                return true;
            if (e is AggregateException { InnerExceptions: var inner } && inner.Any(EndedByPeer))
                return true;
        }
        return false;
    }
}
