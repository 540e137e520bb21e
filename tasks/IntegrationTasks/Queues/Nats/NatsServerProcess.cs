using System.Globalization;

namespace IntegrationTasks.Queues.Nats;

public sealed record NatsServerOptions
{
    /// <summary>Its configuration, log and JetStream store.</summary>
    public required string Directory { get; init; }
    public int Port { get; init; } = NatsDefaults.NatsPort;
    public string BindAddress { get; init; } = SettingDefaults.BindAddress;
    public const string DebianProgram = "/usr/sbin/nats-server";

    public string Program { get; init; } = DebianProgram;

    /// <summary>The largest message the server takes (nats-server's max_payload; its own default is 1 MB).</summary>
    public int MaxPayloadBytes { get; init; } = NatsDefaults.NatsMaxPayloadBytes;

    /// <summary>The most client connections at once; one more is refused by the server.</summary>
    public int MaxConnections { get; init; } = NatsDefaults.NatsMaxConnections;

    /// <summary>The most disk JetStream's store takes; past it a publish is refused.</summary>
    public long MaxStoreBytes { get; init; } = NatsDefaults.NatsMaxStoreBytes;

    /// <summary>A command the server runs through (<c>ip netns exec NAME</c> on two hosts).</summary>
    public IReadOnlyList<string> CommandPrefix { get; init; } = [];

    /// <summary>Over TLS, or both (TLS clients upgrade after the server's INFO; allow_non_tls keeps plaintext ones on the same port).</summary>
    public BrokerTls Tls { get; init; } = BrokerTls.None;

    /// <summary>Its only user; null: open to any client (on loopback only, <see cref="BrokerCredentials.ForBroker"/>).</summary>
    public BrokerCredentials? Credentials { get; init; }

    public string Url => $"nats://{BindAddress}:{Port.ToString(CultureInfo.InvariantCulture)}";
    public string StoreDirectory => Path.Combine(Directory, "jetstream");
}

/// <summary>
/// A private nats-server (Debian's): loopback, its own port, JetStream storing under its own directory, configuration written here.
/// Ready when it says so; stopped with SIGTERM, which nats-server takes as a clean shutdown (JetStream flushes its store).
/// </summary>
public static class NatsServerProcess
{
    /// <summary>What nats-server logs once it accepts clients.</summary>
    public const string ReadyMarker = "Server is ready";

    public const string InstallCommand = "apt-get install -y --no-install-recommends nats-server";

    public static string Configuration(NatsServerOptions options) => string.Create(CultureInfo.InvariantCulture, $$"""
        listen: "{{options.BindAddress}}:{{options.Port}}"
        server_name: "integrationtasks-{{options.Port}}"
        max_payload: {{options.MaxPayloadBytes}}
        max_connections: {{options.MaxConnections}}
        {{Listener(options.Tls)}}
        {{(options.Credentials is { } credentials ? $"authorization {{ users = [ {{ user: \"{credentials.UserName}\", password: \"{credentials.Password}\" }} ] }}" : "")}}
        jetstream {
          store_dir: "{{options.StoreDirectory}}"
          max_file_store: {{options.MaxStoreBytes}}
        }

        """);

    private static string Listener(BrokerTls tls) => tls.Certificates is not { } certificates ? ""
        : $"tls {{ cert_file: \"{certificates.ServerCertificatePath}\", key_file: \"{certificates.ServerKeyPath}\"{(tls.ClientCertificates ? $", ca_file: \"{certificates.AuthorityPath}\", verify: true" : "")} }}"
          + (tls.Plaintext ? "\nallow_non_tls: true" : "");

    public static Task<BrokerProcess<NatsServerOptions>> StartAsync(NatsServerOptions options, Action<string>? log, TimeSpan timeout, CancellationToken cancellationToken)
    {
        Common.OwnerOnlyFiles.CreateDirectory(options.StoreDirectory);
        return BrokerProcess<NatsServerOptions>.StartAsync(options, new BrokerProgram
        {
            Name = "NATS", Program = options.Program, InstallCommand = InstallCommand, Directory = options.Directory, ConfigFileName = "nats.conf",
            Configuration = Configuration(options), Arguments = config => ["-c", config], ReadyMarker = ReadyMarker, LogFileName = "nats-server.log",
            CommandPrefix = options.CommandPrefix,
        }, log, timeout, cancellationToken);
    }
}
