using System.Globalization;
using IntegrationTasks.Common;
using IntegrationTasks.Hosting;

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

    /// <summary>A command the server runs through (<c>ip netns exec NAME</c> on two hosts).</summary>
    public IReadOnlyList<string> CommandPrefix { get; init; } = [];

    public string Url => $"nats://{BindAddress}:{Port.ToString(CultureInfo.InvariantCulture)}";
    public string StoreDirectory => Path.Combine(Directory, "jetstream");
}

/// <summary>
/// A private nats-server (Debian's): loopback, its own port, JetStream storing under its own directory, configuration written here.
/// Ready when it says so; stopped with SIGTERM, which nats-server takes as a clean shutdown (JetStream flushes its store).
/// </summary>
public sealed class NatsServerProcess : IDisposable
{
    /// <summary>What nats-server logs once it accepts clients.</summary>
    public const string ReadyMarker = "Server is ready";

    public const string InstallCommand = "apt-get install -y --no-install-recommends nats-server";

    private readonly NatsServerOptions _options;
    private ServerProcess? _process;

    private NatsServerProcess(NatsServerOptions options) => _options = options;

    public int ProcessId => _process?.ProcessId ?? 0;
    public NatsServerOptions Options => _options;

    public static bool IsInstalled(NatsServerOptions options) => File.Exists(options.Program);

    public static string Configuration(NatsServerOptions options) => string.Create(CultureInfo.InvariantCulture, $$"""
        listen: "{{options.BindAddress}}:{{options.Port}}"
        server_name: "integrationtasks-{{options.Port}}"
        max_payload: {{options.MaxPayloadBytes}}
        max_connections: {{options.MaxConnections}}
        jetstream {
          store_dir: "{{options.StoreDirectory}}"
        }

        """);

    public static async Task<NatsServerProcess> StartAsync(NatsServerOptions options, Action<string>? log, TimeSpan timeout, CancellationToken cancellationToken)
    {
        if (!IsInstalled(options))
            throw new IntegrationException(ErrorCodes.BrokerUnavailable,
                $"NATS is not installed ({options.Program} is missing). Install it with: {InstallCommand}");
        System.IO.Directory.CreateDirectory(options.StoreDirectory);
        var configFile = Path.Combine(options.Directory, "nats.conf");
        await File.WriteAllTextAsync(configFile, Configuration(options), cancellationToken).ConfigureAwait(false);
        var server = new NatsServerProcess(options);
        var launch = new ServerLaunch(options.Program, ["-c", configFile], options.Directory).WithPrefix(options.CommandPrefix);
        server._process = ServerProcess.Start("NATS", launch, Path.Combine(options.Directory, "nats-server.log"), log, ReadyMarker);
        try
        {
            await server._process.WaitReadyAsync(timeout, cancellationToken).ConfigureAwait(false);
            return server;
        }
        catch
        {
            await server.StopAsync(CancellationToken.None).ConfigureAwait(false);
            server.Dispose();
            throw;
        }
    }

    public async Task StopAsync(CancellationToken cancellationToken)
    {
        if (_process is not { HasExited: false } process)
            return;
        ProcessTree.Signal(process.ProcessId, ProcessTree.SigTerm);
        if (await process.StopAsync(TimeSpan.FromSeconds(30), cancellationToken).ConfigureAwait(false) is null)
            process.Kill();
    }

    public void Dispose()
    {
        _process?.Dispose();
        _process = null;
    }
}
