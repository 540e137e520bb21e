using IntegrationTasks.Hosting;

namespace IntegrationTasks.Queues;

/// <summary>
/// How a broker the build starts listens: plaintext, over TLS, or both (a Tls=false+true build's two passes share the one broker),
/// and the certificate it serves (the suite's private authority's, made in TlsFolder for the address it is bound to).
/// </summary>
public sealed record BrokerTls(bool Plaintext, TlsCertificates? Certificates)
{
    public static readonly BrokerTls None = new(true, null);

    public bool Encrypted => Certificates is not null;

    /// <summary>The broker's listeners for the build's Tls (false, true, false+true), its certificate made when TLS is among them.</summary>
    public static BrokerTls For(string tls, string tlsFolder, string bindAddress)
    {
        var values = TlsSetting.Values(tls);
        return values.Contains(true)
            ? new BrokerTls(values.Contains(false), TlsCertificates.Ensure(TlsCertificates.RequireFolder(tlsFolder), TlsCertificates.NamesFor(bindAddress)))
            : None;
    }
}

/// <summary>A client's or broker-using server's TLS: the authority it trusts alone; null without TLS.</summary>
public static class BrokerClientTls
{
    public static System.Security.Cryptography.X509Certificates.X509Certificate2? Authority(bool tls, string tlsFolder) =>
        tls ? Streams.TlsConnector.AuthorityIn(tlsFolder) : null;
}
