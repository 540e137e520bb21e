using IntegrationTasks.Data;
using IntegrationTasks.Hosting;
using IntegrationTasks.Transfer;

namespace IntegrationTasks.Queues.Redis;

/// <summary>
/// Starts the suite's private redis-server (loopback, its own port, its append-only file under artifacts/) and returns once it is
/// ready. It stays registered for the rest of the build: <see cref="StopRedis"/> stops it, and so do the end of a failed or
/// cancelled build, SIGTERM and SIGHUP.
/// </summary>
public sealed class StartRedis() : StartOwnedBroker(BrokerName)
{
    internal const string BrokerName = "Redis";

    public int Port { get; set; } = RedisDefaults.RedisPort;
    public int TlsPort { get; set; } = RedisDefaults.RedisTlsPort;
    public string Program { get; set; } = RedisServerOptions.DebianProgram;

    /// <summary>When the append-only file is flushed to disk: <c>everysec</c> or <c>always</c>.</summary>
    public string AppendFsync { get; set; } = RedisDefaults.RedisAppendFsync;
    public int MaxClients { get; set; } = RedisDefaults.RedisMaxClients;
    public long MaxMemoryBytes { get; set; } = RedisDefaults.RedisMaxMemoryBytes;

    protected override int ClientPort => Port;

    protected override void Validate()
    {
        if (MaxClients < 1 || MaxMemoryBytes < 64 * 1024 * 1024)
            throw new IntegrationException(ErrorCodes.InvalidParameter,
                $"RedisMaxClients must be at least 1 and RedisMaxMemoryBytes at least 64 MiB (were {MaxClients} and {MaxMemoryBytes}).");
    }

    protected override async Task<(ServerProcess Process, Func<CancellationToken, Task> Stop, string Endpoint)> StartBrokerAsync(Action<string> log, TimeSpan readyTimeout,
        CancellationToken cancellationToken)
    {
        var options = new RedisServerOptions
        {
            Directory = Path.GetFullPath(Directory), Port = Port, BindAddress = BindAddress, Program = Program, AppendFsync = AppendFsync,
            MaxClients = MaxClients, MaxMemoryBytes = MaxMemoryBytes, CommandPrefix = ServerLaunch.Words(CommandPrefix), Credentials = Credentials,
            Tls = Listeners, TlsPort = TlsPort,
        };
        Log.LogMessage(MessageImportance.High, "Starting redis-server on {0} (appendfsync {1}; {2}).", options.Endpoint, options.AppendFsync, options.Directory);
        var server = await RedisServerProcess.StartAsync(options, log, readyTimeout, cancellationToken).ConfigureAwait(false);
        return (server.Process, async token =>
        {
            try
            {
                await server.StopAsync(token).ConfigureAwait(false);
            }
            finally
            {
                server.Dispose();
            }
        }, Listening(Port, TlsPort));
    }
}

/// <summary>Stops the server <see cref="StartRedis"/> started.</summary>
public sealed class StopRedis() : StopOwnedBroker(StartRedis.BrokerName);

/// <summary>The Redis Streams server: answers the requests' stream until cancelled or stopped by the suite.</summary>
public sealed class RedisStreamsServer : BrokerServerTask
{
    /// <summary>The Redis server (host:port).</summary>
    public string RedisEndpoint { get; set; } = RedisDefaults.LocalEndpoint;
    public int MaxMessageBytes { get; set; } = SettingDefaults.MaxFrameBytes;
    public int Prefetch { get; set; } = 8;

    protected override async Task<(string Endpoint, Func<CancellationToken, Task> Serve)> StartAsync(RecordSource source, CancellationToken cancellationToken)
    {
        var server = new RedisStreamResponder(source, RedisEndpoint, EventLog)
        {
            Prefetch = Prefetch, MaxMessageBytes = MaxMessageBytes, Credentials = Credentials, ClientTls = ClientTls,
        };
        var serve = await server.StartAsync(cancellationToken).ConfigureAwait(false);
        return ($"redis://{RedisEndpoint}/{RedisStreamTopology.RequestStream}", serve);
    }
}

/// <summary>
/// Redis Streams, durable as Redis's append-only file is (RedisAppendFsync): the counterpart of RabbitMQDurable — a client or server
/// killed mid-run and started again finishes with every row exactly once (batches already whole in ClientTable are not asked for
/// again; a reply delivered twice is imported once).
/// </summary>
public sealed class RedisStreams : BrokerClientTask
{
    /// <summary>The Redis server (host:port).</summary>
    public string RedisEndpoint { get; set; } = RedisDefaults.LocalEndpoint;

    /// <summary>The largest reply the client accepts.</summary>
    public int MaxMessageBytes { get; set; } = SettingDefaults.MaxFrameBytes;

    protected override string TransportName => "RedisStreams";
    protected override (long Bytes, string Property)? MessageLimit => (MaxMessageBytes, "MaxFrameBytes");
    protected override bool IdempotentImport => true;

    /// <summary>This run's requests' id (each client's and batch's under it): a run started again after a kill asks anew.</summary>
    private readonly string _runId = Guid.NewGuid().ToString("N")[..12];

    protected override Task<TransferResult> AttemptAsync(BatchPlan plan, BatchImporter importer, IReadOnlyList<int> pending, ResumingTransfer resumption,
        CancellationToken cancellationToken) =>
        new RedisStreamClient(RedisEndpoint, ClientIndex, _runId)
            {
                MaxInFlight = MaxInFlight, MaxMessageBytes = MaxMessageBytes, Credentials = Credentials, ClientTls = ClientTls,
            }
            .RunAsync(plan, importer, pending, resumption.Committed, resumption.MarkConnected, cancellationToken);
}
