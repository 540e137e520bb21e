using System.Net;
using System.Net.Security;
using System.Security.Authentication;
using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;

namespace IntegrationTasks.Hosting;

/// <summary>
/// A private certificate authority and the server certificate it signs, made with .NET's own APIs into one folder (the
/// build's <c>artifacts/tls</c>): <c>authority.crt</c> (what clients trust), <c>server.crt</c> (the server's certificate, then the
/// authority's) and <c>server.key</c>. The folder and the key are the owner's only. Clients trust this authority and nothing
/// else — no callback that accepts anything — and the server's name must be in its certificate.
/// </summary>
public sealed class TlsCertificates
{
    public const string AuthorityFile = "authority.crt";
    public const string ServerCertificateFile = "server.crt";
    public const string ServerKeyFile = "server.key";

    /// <summary>
    /// The authority's key, kept (owner-only) so that a server bound elsewhere gets a certificate with more names from the same
    /// authority: the brokers and servers of one build share the folder, and a new authority would leave those already serving stale.
    /// It is kept apart, in <see cref="AuthorityFolder"/>: whoever holds it can make certificates every server and client here
    /// trusts, and the certificate folder is what a client machine is given.
    /// </summary>
    public const string AuthorityKeyFile = "authority.key";

    /// <summary>A client certificate from the same authority (client authentication only), for mutual TLS (ClientCertificates=true).</summary>
    public const string ClientCertificateFile = "client.crt";
    public const string ClientKeyFile = "client.key";

    private static readonly Oid ServerAuthentication = new("1.3.6.1.5.5.7.3.1");
    private static readonly Oid ClientAuthentication = new("1.3.6.1.5.5.7.3.2");

    /// <summary>Marks a folder whose certificates the suite made (and may make again); files without it are the user's, never replaced.</summary>
    public const string MadeHereFile = ".made-by-integrationtasks";

    /// <summary>TLS 1.2 and 1.3 only: what both ends of every transport here speak, and nothing older.</summary>
    public const SslProtocols Protocols = SslProtocols.Tls12 | SslProtocols.Tls13;

    /// <summary>The folder Tls=true needs, on either side (the build's default is artifacts/tls).</summary>
    public static string RequireFolder(string folder) => folder.Length > 0 ? folder
        : throw new IntegrationException(ErrorCodes.InvalidParameter, "Tls=true needs TlsFolder (where the certificates are; the build's default is artifacts/tls).");

    /// <summary>A client's bound on its handshake: the transfer's timeout, at most 30 s (a handshake is a few round trips).</summary>
    public static TimeSpan HandshakeTimeout(int timeoutSeconds) => TimeSpan.FromSeconds(Math.Min(30, timeoutSeconds));

    /// <summary>The names a server's certificate holds when none are given: how a client on this machine reaches it.</summary>
    public static readonly IReadOnlyList<string> LocalNames = ["localhost", "127.0.0.1", "::1"];

    /// <summary>
    /// The names a server's certificate needs to be reached on <paramref name="bindAddress"/>: the local ones, this host's name, and the
    /// address itself — or, bound to every address, each of this host's interfaces' (a client on another host connects by one of them).
    /// </summary>
    public static IReadOnlyList<string> NamesFor(string bindAddress)
    {
        var names = new List<string>(LocalNames) { System.Net.Dns.GetHostName() };
        if (IPAddress.TryParse(bindAddress, out var bound) && !bound.Equals(IPAddress.Any) && !bound.Equals(IPAddress.IPv6Any))
            names.Add(bound.ToString());
        else
            names.AddRange(System.Net.NetworkInformation.NetworkInterface.GetAllNetworkInterfaces()
                .SelectMany(i => i.GetIPProperties().UnicastAddresses).Select(a => a.Address)
                .Where(a => a.AddressFamily is System.Net.Sockets.AddressFamily.InterNetwork || !a.IsIPv6LinkLocal).Select(a => a.ToString()));
        return [.. names.Distinct(StringComparer.OrdinalIgnoreCase)];
    }

    private TlsCertificates(string folder) => Folder = folder;

    public string Folder { get; }
    public string AuthorityPath => Path.Combine(Folder, AuthorityFile);
    public string ServerCertificatePath => Path.Combine(Folder, ServerCertificateFile);
    public string ServerKeyPath => Path.Combine(Folder, ServerKeyFile);

    /// <summary>Where the authority's key is kept: beside the certificate folder, not in it (<c>artifacts/tls.authority</c>).</summary>
    public string AuthorityFolder => Path.TrimEndingDirectorySeparator(Folder) + ".authority";

    public string AuthorityKeyPath => Path.Combine(AuthorityFolder, AuthorityKeyFile);

    /// <summary>The certificates in <paramref name="folder"/>, made there first when missing or expiring within a day.</summary>
    public static TlsCertificates Ensure(string folder, IEnumerable<string>? serverNames = null, TimeProvider? clock = null)
    {
        var certificates = new TlsCertificates(Path.GetFullPath(folder));
        var now = (clock ?? TimeProvider.System).GetUtcNow();
        var names = serverNames?.ToList() ?? [.. LocalNames];
        // A folder the suite made before client certificates were is made again (from the same authority) to hold one too.
        if (certificates.IsUsable(now, names) && (File.Exists(certificates.ClientCertificatePath) && File.Exists(Path.Combine(certificates.Folder, ClientKeyFile))
                                                  || !File.Exists(Path.Combine(certificates.Folder, MadeHereFile))))
            return certificates;
        if (File.Exists(certificates.ServerCertificatePath) && !File.Exists(Path.Combine(certificates.Folder, MadeHereFile)))
            throw new IntegrationException(ErrorCodes.TlsRefused,
                $"The certificate in {certificates.Folder} is not one this suite made and does not serve here (expired or about to, its key not an ECDSA key that matches it, or it lacks one of: {string.Join(", ", names)}); it is left as it is. Replace it, or point TlsFolder elsewhere.");
        // A remake for names the server certificate lacks keeps every name it had and, while valid, the authority.
        certificates.Make(names.Union(certificates.MadeNames(), StringComparer.OrdinalIgnoreCase), now, keepAuthority: true);
        return certificates;
    }

    /// <summary>The names of the server certificate the suite made here (none when it is not there, not ours, or unreadable).</summary>
    private IEnumerable<string> MadeNames()
    {
        if (!File.Exists(Path.Combine(Folder, MadeHereFile)) || !File.Exists(ServerCertificatePath))
            return [];
        try
        {
            using var server = X509CertificateLoader.LoadCertificateFromFile(ServerCertificatePath);
            return server.Extensions.OfType<X509SubjectAlternativeNameExtension>()
                .SelectMany(e => e.EnumerateDnsNames().Concat(e.EnumerateIPAddresses().Select(a => a.ToString()))).ToList();
        }
        catch (CryptographicException)
        {
            return [];
        }
    }

    /// <summary>The authority made here before, with its key, when both are still good for more than a day; null otherwise.</summary>
    private X509Certificate2? KeptAuthority(DateTimeOffset now)
    {
        // A folder made when the key was kept in it: the key moves out first.
        var keptInFolder = Path.Combine(Folder, AuthorityKeyFile);
        if (File.Exists(keptInFolder) && File.Exists(Path.Combine(Folder, MadeHereFile)))
        {
            if (!File.Exists(AuthorityKeyPath))
            {
                OwnerOnlyFiles.CreateDirectory(AuthorityFolder);
                OwnerOnlyFiles.Write(AuthorityKeyPath, File.ReadAllText(keptInFolder));
            }
            File.Delete(keptInFolder);
        }
        var keyPath = AuthorityKeyPath;
        if (!File.Exists(Path.Combine(Folder, MadeHereFile)) || !File.Exists(AuthorityPath) || !File.Exists(keyPath))
            return null;
        try
        {
            using var certificate = LoadAuthority();
            if (certificate.NotAfter.ToUniversalTime() < now.UtcDateTime.AddDays(1))
                return null;
            using var key = ECDsa.Create();
            key.ImportFromPem(File.ReadAllText(keyPath));
            return certificate.CopyWithPrivateKey(key);
        }
        catch (Exception e) when (e is CryptographicException or ArgumentException or IOException)
        {
            return null;
        }
    }

    /// <summary>The certificates already in <paramref name="folder"/>, made by a server task (the host process only reads them).</summary>
    public static TlsCertificates In(string folder) => new(Path.GetFullPath(folder));

    /// <summary>An authority and a server certificate of its own in <paramref name="folder"/> (for tests: a server no client here trusts).</summary>
    public static TlsCertificates MakeNew(string folder, IEnumerable<string>? serverNames = null, DateTimeOffset? notBefore = null, TimeSpan? validity = null)
    {
        var certificates = new TlsCertificates(Path.GetFullPath(folder));
        certificates.Make(serverNames ?? LocalNames, notBefore ?? DateTimeOffset.UtcNow, validity);
        return certificates;
    }

    public X509Certificate2 LoadAuthority() => X509CertificateLoader.LoadCertificateFromFile(AuthorityPath);

    public string ClientCertificatePath => Path.Combine(Folder, ClientCertificateFile);

    /// <summary>The server's certificate with its key, and the chain it sends (its authority's certificate).</summary>
    public SslStreamCertificateContext LoadServerContext() => LoadContext(ServerCertificatePath, ServerKeyPath);

    /// <summary>The client certificate with its key, for mutual TLS; IT3009 when the folder has none.</summary>
    public SslStreamCertificateContext LoadClientContext()
    {
        try
        {
            return LoadContext(ClientCertificatePath, Path.Combine(Folder, ClientKeyFile));
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException or CryptographicException or ArgumentException)
        {
            throw new IntegrationException(ErrorCodes.TlsRefused,
                $"No usable client certificate and key at {ClientCertificatePath} for ClientCertificates=true ({e.GetType().Name}): start the server with it first (it makes them), or point TlsFolder at its folder.", e);
        }
    }

    private static SslStreamCertificateContext LoadContext(string certificatePath, string keyPath)
    {
        var collection = new X509Certificate2Collection();
        collection.ImportFromPemFile(certificatePath);
        using var withoutKey = collection[0];
        using var key = ECDsa.Create();
        key.ImportFromPem(File.ReadAllText(keyPath));
        // Held by the context for the connection's life (the key is in memory only: nothing is written to a key store).
        var certificate = withoutKey.CopyWithPrivateKey(key);
        return SslStreamCertificateContext.Create(certificate, new X509Certificate2Collection(collection.Skip(1).ToArray()), offline: true);
    }

    /// <summary>A server's options; with <paramref name="requireClientCertificate"/>, mutual TLS: a client certificate from this authority or no connection.</summary>
    public SslServerAuthenticationOptions ServerOptions(bool requireClientCertificate = false)
    {
        var options = new SslServerAuthenticationOptions
        {
            ServerCertificateContext = LoadServerContext(), EnabledSslProtocols = Protocols, ClientCertificateRequired = requireClientCertificate,
        };
        if (requireClientCertificate)
        {
            var authority = LoadAuthority();
            options.RemoteCertificateValidationCallback = (_, certificate, chain, errors) =>
                certificate is X509Certificate2 presented && IsClientFromAuthority(presented, chain, errors, authority);
        }
        return options;
    }

    /// <summary>
    /// A client's certificate judged: present, chained to <paramref name="authority"/> alone, made for client authentication (no name
    /// to check: the certificate stands for whoever holds its key).
    /// </summary>
    public static bool IsClientFromAuthority(X509Certificate2 certificate, X509Chain? presented, SslPolicyErrors errors, X509Certificate2 authority)
    {
        if ((errors & SslPolicyErrors.RemoteCertificateNotAvailable) != 0)
            return false;
        using var chain = new X509Chain { ChainPolicy = ChainPolicy(authority, ClientAuthentication) };
        foreach (var element in presented?.ChainElements.Skip(1) ?? [])
            chain.ChainPolicy.ExtraStore.Add(element.Certificate);
        return chain.Build(certificate);
    }

    /// <summary>A client's options: the server's name checked against its certificate, its chain against this authority alone.</summary>
    public SslClientAuthenticationOptions ClientOptions(string serverName) => ClientOptions(serverName, LoadAuthority());

    /// <param name="clientCertificate">For mutual TLS, the certificate (with its key) the client presents.</param>
    public static SslClientAuthenticationOptions ClientOptions(string serverName, X509Certificate2 authority, SslStreamCertificateContext? clientCertificate = null)
    {
        // Made for server authentication: the client certificate, from the same authority, can never pass as a server's.
        var policy = ChainPolicy(authority, ServerAuthentication);
        return new SslClientAuthenticationOptions
        {
            TargetHost = serverName,
            EnabledSslProtocols = Protocols,
            CertificateChainPolicy = policy,
            ClientCertificateContext = clientCertificate,
        };
    }

    /// <summary>A chain to <paramref name="authority"/> alone, for certificates made for <paramref name="usage"/>.</summary>
    private static X509ChainPolicy ChainPolicy(X509Certificate2 authority, Oid usage)
    {
        var policy = new X509ChainPolicy
        {
            TrustMode = X509ChainTrustMode.CustomRootTrust,
            RevocationMode = X509RevocationMode.NoCheck, // a private authority publishes no revocation list
            DisableCertificateDownloads = true,
        };
        policy.CustomTrustStore.Add(authority);
        policy.ApplicationPolicy.Add(usage);
        return policy;
    }

    /// <summary>
    /// For a client whose stack lets only a callback judge the server's certificate (WCF's HTTP handler): the stack's own findings
    /// stand except an untrusted chain (its name check among them), and the chain must then build to <paramref name="authority"/>
    /// alone, with what the server presented as its intermediates.
    /// </summary>
    public static bool IsFromAuthority(X509Certificate2 certificate, X509Chain? presented, SslPolicyErrors errors, X509Certificate2 authority)
    {
        if ((errors & ~SslPolicyErrors.RemoteCertificateChainErrors) != SslPolicyErrors.None)
            return false;
        using var chain = new X509Chain { ChainPolicy = ClientOptions("", authority).CertificateChainPolicy! };
        foreach (var element in presented?.ChainElements.Skip(1) ?? [])
            chain.ChainPolicy.ExtraStore.Add(element.Certificate);
        return chain.Build(certificate);
    }

    /// <summary>
    /// Present, valid for more than a day, naming every one of <paramref name="names"/> (a server bound elsewhere needs more), chained
    /// to the authority beside it, and with the key that belongs to it: a folder left half made is made again, never served.
    /// </summary>
    private bool IsUsable(DateTimeOffset now, IReadOnlyList<string> names)
    {
        if (!File.Exists(AuthorityPath) || !File.Exists(ServerCertificatePath) || !File.Exists(ServerKeyPath))
            return false;
        try
        {
            using var authority = LoadAuthority();
            var context = LoadServerContext();
            using var server = context.TargetCertificate;
            var usableUntil = now.AddDays(1).UtcDateTime;
            if (authority.NotAfter.ToUniversalTime() <= usableUntil || server.NotAfter.ToUniversalTime() <= usableUntil
                || server.NotBefore.ToUniversalTime() > now.UtcDateTime || !names.All(name => server.MatchesHostname(name)))
                return false;
            using var chain = new X509Chain();
            chain.ChainPolicy = ClientOptions("localhost", authority).CertificateChainPolicy!;
            return chain.Build(server);
        }
        catch (Exception e) when (e is CryptographicException or ArgumentException or IOException)
        {
            return false;
        }
    }

    private void Make(IEnumerable<string> serverNames, DateTimeOffset notBefore, TimeSpan? validity = null, bool keepAuthority = false)
    {
        var lifetime = validity ?? TimeSpan.FromDays(30);
        OwnerOnlyFiles.CreateDirectory(Folder);
        using var kept = keepAuthority ? KeptAuthority(notBefore) : null;
        using var authorityKey = ECDsa.Create(ECCurve.NamedCurves.nistP256);
        using var authority = kept ?? NewAuthority(authorityKey, notBefore, lifetime);
        var authorityEnd = new DateTimeOffset(authority.NotAfter.ToUniversalTime());

        using var serverKey = ECDsa.Create(ECCurve.NamedCurves.nistP256);
        var names = new SubjectAlternativeNameBuilder();
        foreach (var name in serverNames.Distinct(StringComparer.OrdinalIgnoreCase))
        {
            if (IPAddress.TryParse(name, out var address))
                names.AddIpAddress(address);
            else
                names.AddDnsName(name);
        }
        var serverRequest = new CertificateRequest("CN=IntegrationTasks server", serverKey, HashAlgorithmName.SHA256);
        serverRequest.CertificateExtensions.Add(new X509BasicConstraintsExtension(false, false, 0, critical: true));
        serverRequest.CertificateExtensions.Add(new X509KeyUsageExtension(X509KeyUsageFlags.DigitalSignature, critical: true));
        serverRequest.CertificateExtensions.Add(new X509EnhancedKeyUsageExtension([ServerAuthentication], critical: false));
        serverRequest.CertificateExtensions.Add(names.Build(critical: false));
        serverRequest.CertificateExtensions.Add(X509AuthorityKeyIdentifierExtension.CreateFromCertificate(authority, true, false));
        var serial = RandomNumberGenerator.GetBytes(16);
        serial[0] &= 0x7F; // a positive serial number
        var serverEnd = notBefore + lifetime - TimeSpan.FromMinutes(1);
        using var server = serverRequest.Create(authority, notBefore.AddMinutes(-5), serverEnd < authorityEnd ? serverEnd : authorityEnd.AddMinutes(-1), serial);

        OwnerOnlyFiles.Write(Path.Combine(Folder, MadeHereFile), "Made by IntegrationTasks: a private authority and a server certificate for its tests; made again when needed.\n");
        OwnerOnlyFiles.Write(ServerKeyPath, serverKey.ExportPkcs8PrivateKeyPem());
        OwnerOnlyFiles.Write(ServerCertificatePath, server.ExportCertificatePem() + "\n" + authority.ExportCertificatePem() + "\n");
        OwnerOnlyFiles.Write(AuthorityPath, authority.ExportCertificatePem() + "\n");
        MakeClient(authority, notBefore, serverEnd < authorityEnd ? serverEnd : authorityEnd.AddMinutes(-1));
        if (kept is null)
        {
            OwnerOnlyFiles.CreateDirectory(AuthorityFolder);
            OwnerOnlyFiles.Write(AuthorityKeyPath, authorityKey.ExportPkcs8PrivateKeyPem());
        }
    }

    private void MakeClient(X509Certificate2 authority, DateTimeOffset notBefore, DateTimeOffset notAfter)
    {
        using var key = ECDsa.Create(ECCurve.NamedCurves.nistP256);
        var request = new CertificateRequest("CN=IntegrationTasks client", key, HashAlgorithmName.SHA256);
        request.CertificateExtensions.Add(new X509BasicConstraintsExtension(false, false, 0, critical: true));
        request.CertificateExtensions.Add(new X509KeyUsageExtension(X509KeyUsageFlags.DigitalSignature, critical: true));
        request.CertificateExtensions.Add(new X509EnhancedKeyUsageExtension([ClientAuthentication], critical: false));
        request.CertificateExtensions.Add(X509AuthorityKeyIdentifierExtension.CreateFromCertificate(authority, true, false));
        var serial = RandomNumberGenerator.GetBytes(16);
        serial[0] &= 0x7F;
        using var client = request.Create(authority, notBefore.AddMinutes(-5), notAfter, serial);
        OwnerOnlyFiles.Write(Path.Combine(Folder, ClientKeyFile), key.ExportPkcs8PrivateKeyPem());
        OwnerOnlyFiles.Write(ClientCertificatePath, client.ExportCertificatePem() + "\n" + authority.ExportCertificatePem() + "\n");
    }

    private static X509Certificate2 NewAuthority(ECDsa key, DateTimeOffset notBefore, TimeSpan lifetime)
    {
        var request = new CertificateRequest("CN=IntegrationTasks private authority", key, HashAlgorithmName.SHA256);
        request.CertificateExtensions.Add(new X509BasicConstraintsExtension(certificateAuthority: true, hasPathLengthConstraint: true, pathLengthConstraint: 0, critical: true));
        request.CertificateExtensions.Add(new X509KeyUsageExtension(X509KeyUsageFlags.KeyCertSign | X509KeyUsageFlags.CrlSign, critical: true));
        request.CertificateExtensions.Add(new X509SubjectKeyIdentifierExtension(request.PublicKey, critical: false));
        return request.CreateSelfSigned(notBefore.AddMinutes(-5), notBefore + lifetime);
    }
}
