using System.Globalization;
using System.Security.Cryptography;
using System.Text;

namespace IntegrationTasks.Queues.Redis;

public sealed record RedisServerOptions
{
    /// <summary>Its configuration, log and append-only file.</summary>
    public required string Directory { get; init; }
    public int Port { get; init; } = RedisDefaults.RedisPort;
    public string BindAddress { get; init; } = SettingDefaults.BindAddress;
    public const string DebianProgram = "/usr/bin/redis-server";

    public string Program { get; init; } = DebianProgram;

    /// <summary><c>everysec</c> or <c>always</c> (<see cref="RedisServerProcess.AppendFsyncValues"/>).</summary>
    public string AppendFsync { get; init; } = RedisDefaults.RedisAppendFsync;
    public int MaxClients { get; init; } = RedisDefaults.RedisMaxClients;
    public long MaxMemoryBytes { get; init; } = RedisDefaults.RedisMaxMemoryBytes;
    public IReadOnlyList<string> CommandPrefix { get; init; } = [];

    /// <summary>Its TLS listener's port (<see cref="Tls"/>), beside the plaintext one when that is kept too.</summary>
    public int TlsPort { get; init; } = RedisDefaults.RedisTlsPort;
    public BrokerTls Tls { get; init; } = BrokerTls.None;

    /// <summary>Its only user; null: the default user, open, which protected mode keeps to loopback.</summary>
    public BrokerCredentials? Credentials { get; init; }

    public string Endpoint => $"{BindAddress}:{Port.ToString(CultureInfo.InvariantCulture)}";
}

/// <summary>
/// A private redis-server (Debian's): loopback, its own port, an append-only file under its own directory (no RDB snapshots),
/// configuration written here. Ready when it says so; stopped with SIGTERM, on which Redis flushes the file and exits.
/// </summary>
public static class RedisServerProcess
{
    public const string ReadyMarker = "Ready to accept connections";

    public const string InstallCommand = "apt-get install -y --no-install-recommends redis-server";

    public static readonly IReadOnlyList<string> AppendFsyncValues = ["everysec", "always"];

    /// <summary>
    /// Its configuration. Protected mode (Redis's refusal of every client not on loopback while the default user needs no password)
    /// stays on. With credentials the default user is off and has no password, so every client logs in as the one user, whose
    /// password the file holds only as its SHA-256 (Redis's ACL form).
    /// </summary>
    public static string Configuration(RedisServerOptions options) => string.Create(CultureInfo.InvariantCulture, $"""
        bind {options.BindAddress}
        protected-mode yes
        {Users(options.Credentials)}
        port {(options.Tls.Plaintext ? options.Port : 0)}
        {Listener(options)}
        dir "{options.Directory}"
        daemonize no
        supervised no
        save ""
        appendonly yes
        appendfsync {options.AppendFsync}
        maxclients {options.MaxClients}
        maxmemory {options.MaxMemoryBytes}
        maxmemory-policy noeviction
        logfile ""

        """);

    /// <summary>The TLS listener's lines: TLS 1.2 and 1.3, the suite's certificate, client certificates from its authority asked for with ClientCertificates.</summary>
    private static string Listener(RedisServerOptions options) => options.Tls is not { Certificates: { } certificates } tls ? "" : string.Join('\n',
        string.Create(CultureInfo.InvariantCulture, $"tls-port {options.TlsPort}"), $"tls-cert-file \"{certificates.ServerCertificatePath}\"", $"tls-key-file \"{certificates.ServerKeyPath}\"",
        $"tls-ca-cert-file \"{certificates.AuthorityPath}\"", tls.ClientCertificates ? "tls-auth-clients yes" : "tls-auth-clients no", "tls-protocols \"TLSv1.2 TLSv1.3\"");

    /// <summary>The ACL lines: none without credentials; else the default user off, without password, and the one user.</summary>
    private static string Users(BrokerCredentials? credentials) => credentials is null ? "" : string.Join('\n',
        "user default off resetpass resetkeys resetchannels -@all",
        $"user {credentials.UserName} on #{Convert.ToHexStringLower(SHA256.HashData(Encoding.UTF8.GetBytes(credentials.Password)))} ~* &* +@all");

    public static Task<BrokerProcess<RedisServerOptions>> StartAsync(RedisServerOptions options, Action<string>? log, TimeSpan timeout, CancellationToken cancellationToken)
    {
        if (!AppendFsyncValues.Contains(options.AppendFsync))
            throw new IntegrationException(ErrorCodes.InvalidParameter,
                $"RedisAppendFsync must be {string.Join(" or ", AppendFsyncValues)} (was '{options.AppendFsync}').");
        return BrokerProcess<RedisServerOptions>.StartAsync(options, new BrokerProgram
        {
            Name = "Redis", Program = options.Program, InstallCommand = InstallCommand, Directory = options.Directory, ConfigFileName = "redis.conf",
            Configuration = Configuration(options), Arguments = config => [config], ReadyMarker = ReadyMarker, LogFileName = "redis-server.log",
            CommandPrefix = options.CommandPrefix,
        }, log, timeout, cancellationToken);
    }
}
