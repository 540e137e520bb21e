using System.Globalization;
using IntegrationTasks.Common;
using IntegrationTasks.Hosting;

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
    public IReadOnlyList<string> CommandPrefix { get; init; } = [];

    public string Endpoint => $"{BindAddress}:{Port.ToString(CultureInfo.InvariantCulture)}";
}

/// <summary>
/// A private redis-server (Debian's): loopback, its own port, an append-only file under its own directory (no RDB snapshots),
/// configuration written here. Ready when it says so; stopped with SIGTERM, on which Redis flushes the file and exits.
/// </summary>
public sealed class RedisServerProcess : IDisposable
{
    public const string ReadyMarker = "Ready to accept connections";

    public const string InstallCommand = "apt-get install -y --no-install-recommends redis-server";

    private readonly RedisServerOptions _options;
    private ServerProcess? _process;

    private RedisServerProcess(RedisServerOptions options) => _options = options;

    public int ProcessId => _process?.ProcessId ?? 0;
    public RedisServerOptions Options => _options;

    public static readonly IReadOnlyList<string> AppendFsyncValues = ["everysec", "always"];

    public static bool IsInstalled(RedisServerOptions options) => File.Exists(options.Program);

    public static string Configuration(RedisServerOptions options) => string.Create(CultureInfo.InvariantCulture, $"""
        bind {options.BindAddress}
        port {options.Port}
        dir "{options.Directory}"
        daemonize no
        supervised no
        save ""
        appendonly yes
        appendfsync {options.AppendFsync}
        maxclients {options.MaxClients}
        logfile ""

        """);

    public static async Task<RedisServerProcess> StartAsync(RedisServerOptions options, Action<string>? log, TimeSpan timeout, CancellationToken cancellationToken)
    {
        if (!AppendFsyncValues.Contains(options.AppendFsync))
            throw new IntegrationException(ErrorCodes.InvalidParameter,
                $"RedisAppendFsync must be {string.Join(" or ", AppendFsyncValues)} (was '{options.AppendFsync}').");
        if (!IsInstalled(options))
            throw new IntegrationException(ErrorCodes.BrokerUnavailable,
                $"Redis is not installed ({options.Program} is missing). Install it with: {InstallCommand}");
        System.IO.Directory.CreateDirectory(options.Directory);
        var configFile = Path.Combine(options.Directory, "redis.conf");
        await File.WriteAllTextAsync(configFile, Configuration(options), cancellationToken).ConfigureAwait(false);
        var server = new RedisServerProcess(options);
        var launch = new ServerLaunch(options.Program, [configFile], options.Directory).WithPrefix(options.CommandPrefix);
        server._process = ServerProcess.Start("Redis", launch, Path.Combine(options.Directory, "redis-server.log"), log, ReadyMarker);
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
