using IntegrationTasks.Data;
using IntegrationTasks.Hosting;
using IntegrationTasks.Transfer;

namespace IntegrationTasks.Queues.Nats;

/// <summary>
/// Starts the suite's private nats-server (loopback, its own port and directory under artifacts/) and returns once it is ready. It
/// stays registered for the rest of the build: <see cref="StopNats"/> stops it, and so do the end of a failed or cancelled build,
/// SIGTERM and SIGHUP.
/// </summary>
public sealed class StartNats() : StartOwnedBroker(BrokerName)
{
    internal const string BrokerName = "NATS";

    public int Port { get; set; } = NatsDefaults.NatsPort;
    public string Program { get; set; } = NatsServerOptions.DebianProgram;
    public int MaxPayloadBytes { get; set; } = NatsDefaults.NatsMaxPayloadBytes;
    public int MaxConnections { get; set; } = NatsDefaults.NatsMaxConnections;
    public long MaxStoreBytes { get; set; } = NatsDefaults.NatsMaxStoreBytes;

    protected override int ClientPort => Port;

    protected override void Validate()
    {
        if (MaxConnections < 1 || MaxPayloadBytes < 1 || MaxStoreBytes < 64 * 1024 * 1024)
            throw new IntegrationException(ErrorCodes.InvalidParameter,
                $"NatsMaxConnections and NatsMaxPayloadBytes must be at least 1 and NatsMaxStoreBytes at least 64 MiB (were {MaxConnections}, {MaxPayloadBytes} and {MaxStoreBytes}).");
    }

    protected override async Task<(ServerProcess Process, Func<CancellationToken, Task> Stop, string Endpoint)> StartBrokerAsync(Action<string> log, TimeSpan readyTimeout,
        CancellationToken cancellationToken)
    {
        var options = new NatsServerOptions
        {
            Directory = Path.GetFullPath(Directory), Port = Port, BindAddress = BindAddress, Program = Program, MaxPayloadBytes = MaxPayloadBytes,
            MaxConnections = MaxConnections, MaxStoreBytes = MaxStoreBytes, Credentials = Credentials, Tls = Listeners, CommandPrefix = ServerLaunch.Words(CommandPrefix),
        };
        Log.LogMessage(MessageImportance.High, "Starting nats-server on {0} ({1}).", options.Url, options.Directory);
        var server = await NatsServerProcess.StartAsync(options, log, readyTimeout, cancellationToken).ConfigureAwait(false);
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
        }, options.Url);
    }
}

/// <summary>Stops the server <see cref="StartNats"/> started.</summary>
public sealed class StopNats() : StopOwnedBroker(StartNats.BrokerName);

/// <summary>The NATS core server: answers requests on its subject until cancelled or stopped by the suite.</summary>
public sealed class NatsServer : BrokerServerTask
{
    public string NatsUrl { get; set; } = NatsDefaults.LocalUrl;
    public int MaxMessageBytes { get; set; } = NatsDefaults.NatsMaxPayloadBytes;

    protected override async Task<(string Endpoint, Func<CancellationToken, Task> Serve)> StartAsync(RecordSource source, CancellationToken cancellationToken)
    {
        var server = new NatsCoreServer(source, NatsUrl, NatsCoreServer.Subject, EventLog)
        {
            MaxMessageBytes = MaxMessageBytes, Credentials = Credentials, ClientTls = ClientTls,
        };
        var serve = await server.StartAsync(cancellationToken).ConfigureAwait(false);
        return ($"{NatsUrl}/{NatsCoreServer.Subject}", serve);
    }
}

/// <summary>The JetStream server: answers the requests' stream until cancelled or stopped by the suite.</summary>
public sealed class NatsJetStreamServer : BrokerServerTask
{
    public string NatsUrl { get; set; } = NatsDefaults.LocalUrl;
    public int MaxMessageBytes { get; set; } = NatsDefaults.NatsMaxPayloadBytes;
    public int Prefetch { get; set; } = 8;

    protected override async Task<(string Endpoint, Func<CancellationToken, Task> Serve)> StartAsync(RecordSource source, CancellationToken cancellationToken)
    {
        var server = new JetStreamServer(source, NatsUrl, EventLog)
        {
            Prefetch = Prefetch, MaxMessageBytes = MaxMessageBytes, Credentials = Credentials, ClientTls = ClientTls,
        };
        var serve = await server.StartAsync(cancellationToken).ConfigureAwait(false);
        return ($"{NatsUrl}/{JetStreamTopology.RequestStream}", serve);
    }
}

/// <summary>What the two NATS clients share: the server's address and the largest reply.</summary>
public abstract class NatsClientTask : BrokerClientTask
{
    public string NatsUrl { get; set; } = NatsDefaults.LocalUrl;

    /// <summary>The largest reply the client accepts (nats-server's max_payload bounds what it carries).</summary>
    public int MaxMessageBytes { get; set; } = NatsDefaults.NatsMaxPayloadBytes;

    protected override (long Bytes, string Property)? MessageLimit => (MaxMessageBytes, "NatsMaxPayloadBytes");
}

/// <summary>NATS core request-reply (at most once): the counterpart of RabbitMQClientTest.</summary>
public sealed class NatsClient : NatsClientTask
{
    protected override string TransportName => "NatsClient";

    protected override Task<TransferResult> AttemptAsync(BatchPlan plan, BatchImporter importer, IReadOnlyList<int> pending, ResumingTransfer resumption,
        CancellationToken cancellationToken) =>
        new NatsCoreClient(NatsUrl, NatsCoreServer.Subject)
            {
                MaxInFlight = MaxInFlight, MaxMessageBytes = MaxMessageBytes, Credentials = Credentials, ClientTls = ClientTls,
            }
            .RunAsync(plan, importer, pending, resumption.Committed, resumption.MarkConnected, cancellationToken);
}

/// <summary>
/// JetStream, durable: the counterpart of RabbitMQDurable — a client or server killed mid-run and started again finishes with every
/// row exactly once (batches already whole in ClientTable are not asked for again; a reply delivered twice is imported once).
/// </summary>
public sealed class NatsJetStream : NatsClientTask
{
    protected override string TransportName => "NatsJetStream";
    protected override bool IdempotentImport => true;

    /// <summary>This run's requests' id (each client's and batch's under it): a run started again after a kill asks anew.</summary>
    private readonly string _runId = Guid.NewGuid().ToString("N")[..12];

    protected override Task<TransferResult> AttemptAsync(BatchPlan plan, BatchImporter importer, IReadOnlyList<int> pending, ResumingTransfer resumption,
        CancellationToken cancellationToken) =>
        new JetStreamClient(NatsUrl, ClientIndex, _runId)
            {
                MaxInFlight = MaxInFlight, MaxMessageBytes = MaxMessageBytes, Credentials = Credentials, ClientTls = ClientTls,
            }
            .RunAsync(plan, importer, pending, resumption.Committed, resumption.MarkConnected, cancellationToken);
}
