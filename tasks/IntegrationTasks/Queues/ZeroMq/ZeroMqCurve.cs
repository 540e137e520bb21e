using NetMQ;

namespace IntegrationTasks.Queues.ZeroMq;

/// <summary>
/// CurveZMQ for the ZeroMQ transports with Tls=true: ZeroMQ's own encryption (no TLS carries its protocol). The server's key pair
/// is made once in TlsFolder beside the TLS files, its secret key owner-only; a client is given the server's public key, which
/// proves the server, and makes a key pair of its own for each socket. NetMQ authenticates no client by its key (it has no ZAP
/// handler: any key is taken), so Curve encrypts and proves the server only — ZeroMQ still listens on loopback alone, and
/// ClientCertificates=true leaves it out.
/// </summary>
public static class ZeroMqCurve
{
    public const string SecretKeyFile = "zeromq-server.secret";
    public const string PublicKeyFile = "zeromq-server.public";

    /// <summary>The server's key pair in <paramref name="tlsFolder"/>, made there when missing.</summary>
    public static NetMQCertificate ServerCertificate(string tlsFolder)
    {
        var folder = Hosting.TlsCertificates.RequireFolder(tlsFolder);
        var secret = Path.Combine(folder, SecretKeyFile);
        if (File.Exists(secret))
        {
            try
            {
                return NetMQCertificate.CreateFromSecretKey(File.ReadAllText(secret).Trim());
            }
            catch (Exception e) when (e is ArgumentException or FormatException or IOException)
            {
                throw new IntegrationException(ErrorCodes.TlsRefused, $"The ZeroMQ server's key in {secret} cannot be read ({e.Message}): remove it to have a new one made.", e);
            }
        }
        var made = new NetMQCertificate();
        Common.OwnerOnlyFiles.CreateDirectory(folder);
        Common.OwnerOnlyFiles.Write(secret, made.SecretKeyZ85 + "\n");
        Common.OwnerOnlyFiles.Write(Path.Combine(folder, PublicKeyFile), made.PublicKeyZ85 + "\n");
        return made;
    }

    /// <summary>The server's public key a client checks it by; IT3009 when the folder has none.</summary>
    public static byte[] ServerPublicKey(string tlsFolder)
    {
        var path = Path.Combine(Hosting.TlsCertificates.RequireFolder(tlsFolder), PublicKeyFile);
        try
        {
            return NetMQCertificate.FromPublicKey(File.ReadAllText(path).Trim()).PublicKey;
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException or ArgumentException or FormatException)
        {
            throw new IntegrationException(ErrorCodes.TlsRefused,
                $"No ZeroMQ server key at {path} for Tls=true ({e.GetType().Name}): start the server first (it makes it), or point TlsFolder at its folder.", e);
        }
    }
}
