using IntegrationTasks.Data;
using IntegrationTasks.Hosting;
using IntegrationTasks.Transfer;

namespace IntegrationTasks.Queues;

/// <summary>
/// Starts the suite's private RabbitMQ node (Debian's rabbitmq-server, loopback only, its own data
/// directory and ports) and returns when it accepts connections. It stays registered for the rest
/// of the build: <see cref="StopRabbitMQ"/> stops it, and the end of a failed or cancelled build does.
/// </summary>
public sealed class StartRabbitMQ() : StartOwnedBroker(BrokerName)
{
    internal const string BrokerName = "RabbitMQ";

    public int Port { get; set; } = 5673;
    public int TlsPort { get; set; } = SettingDefaults.RabbitMQTlsPort;
    public int DistributionPort { get; set; } = 25673;
    /// <summary>The Erlang port mapper's port (epmd), loopback only; stopped with the node.</summary>
    public int EpmdPort { get; set; } = 4370;

    /// <summary>The broker's most client connections at once (each RabbitMQ client, and each server, holds one); one more is refused with IT3008.</summary>
    public int MaxConnections { get; set; } = 1000;

    protected override int ClientPort => Port;

    protected override void Validate()
    {
        if (MaxConnections < 1)
            throw new IntegrationException(ErrorCodes.InvalidParameter, $"MaxConnections must be at least 1 (was {MaxConnections}).");
    }

    protected override async Task<(ServerProcess Process, Func<CancellationToken, Task> Stop, string Endpoint)> StartBrokerAsync(Action<string> log, TimeSpan readyTimeout,
        CancellationToken cancellationToken)
    {
        var options = new RabbitMqNodeOptions
        {
            Directory = Path.GetFullPath(Directory), AmqpPort = Port, DistributionPort = DistributionPort, EpmdPort = EpmdPort,
            BindAddress = BindAddress, CommandPrefix = ServerLaunch.Words(CommandPrefix), Credentials = Credentials,
            Tls = Listeners, AmqpsPort = TlsPort,
        };
        Log.LogMessage(MessageImportance.High, "Starting RabbitMQ node {0} on {1}:{2} ({3}).", options.NodeName, BindAddress, Port, options.Directory);
        var node = await RabbitMqNode.StartAsync(options, log, readyTimeout, cancellationToken).ConfigureAwait(false);
        async Task StopAsync(CancellationToken token)
        {
            try
            {
                await node.StopAsync(token).ConfigureAwait(false);
            }
            finally
            {
                node.Dispose();
            }
        }
        try
        {
            await node.SetConnectionLimitAsync(MaxConnections, cancellationToken).ConfigureAwait(false);
        }
        catch
        {
            await StopAsync(CancellationToken.None).ConfigureAwait(false);
            throw;
        }
        return (node.Process, StopAsync, Listening(Port, TlsPort));
    }
}

/// <summary>Stops the node started by <see cref="StartRabbitMQ"/> (and its epmd).</summary>
public sealed class StopRabbitMQ() : StopOwnedBroker(StartRabbitMQ.BrokerName);

/// <summary>The series' RabbitMQServer: answers request messages until cancelled (Ctrl+C) or stopped by the suite.</summary>
public sealed class RabbitMQServer : BrokerServerTask
{
    public string RabbitMQHostName { get; set; } = "127.0.0.1";
    public int RabbitMQPort { get; set; } = SettingDefaults.RabbitMQPort;

    /// <summary>Serve the durable queues (RabbitMQDurable) instead of the fast ones (RabbitMQClientTest).</summary>
    public bool Durable { get; set; }

    public int Prefetch { get; set; } = 8;

    private QueueServer? _server;

    protected override long? RequestsWaiting => _server?.RequestsWaiting;

    protected override async Task<(string Endpoint, Func<CancellationToken, Task> Serve)> StartAsync(RecordSource source, CancellationToken cancellationToken)
    {
        var topology = Durable ? QueueTopology.Reliable : QueueTopology.Fast;
        var server = _server = new QueueServer(source, BrokerOptions.For(RabbitMQHostName, RabbitMQPort, CredentialsFile, ClientTls), topology, EventLog)
        {
            Prefetch = Prefetch,
        };
        var serve = await server.StartAsync(cancellationToken).ConfigureAwait(false);
        return ($"amqp://{RabbitMQHostName}:{RabbitMQPort}/{topology.RequestQueue}", serve);
    }
}

/// <summary>A RabbitMQ client task: the broker, and the topology (fast or durable) its subclass names.</summary>
public abstract class RabbitMQClientTask : BrokerClientTask
{
    public string RabbitMQHostName { get; set; } = "127.0.0.1";
    public int RabbitMQPort { get; set; } = SettingDefaults.RabbitMQPort;

    /// <summary>The largest reply the client accepts (a message's body).</summary>
    public int MaxMessageBytes { get; set; } = SettingDefaults.MaxFrameBytes;

    protected override (long Bytes, string Property)? MessageLimit => (MaxMessageBytes, "RabbitMQMaxMessageBytes");

    protected abstract QueueTopology Topology { get; }

    /// <summary>
    /// Durable queues keep every request and answer across a broken connection: a new one asks again for what is not committed
    /// (answers that come twice are ignored on import). The fast queues promise nothing, so a break fails cleanly.
    /// </summary>
    protected override bool Resumes => Topology.Durable;

    private QueueClient? _client;

    protected override Task<TransferResult> AttemptAsync(BatchPlan plan, BatchImporter importer, IReadOnlyList<int> pending, ResumingTransfer resumption,
        CancellationToken cancellationToken) =>
        (_client ??= new QueueClient(BrokerOptions.For(RabbitMQHostName, RabbitMQPort, CredentialsFile, ClientTls), Topology.ForClient(ClientIndex, ClientMachine))
            {
                MaxInFlight = MaxInFlight, MaxMessageBytes = MaxMessageBytes,
            })
            .RunAsync(plan, importer, pending, resumption.Committed, resumption.MarkConnected, cancellationToken);
}

/// <summary>The series' RabbitMQClientTest: transient queues and messages, no confirms.</summary>
public sealed class RabbitMQClientTest : RabbitMQClientTask
{
    protected override string TransportName => "RabbitMQClientTest";
    protected override QueueTopology Topology => QueueTopology.Fast;
}

/// <summary>
/// Durable and confirmed: a client or server killed mid-run and started again finishes with every
/// row exactly once (batches already complete are not asked for again; repeats are ignored on import).
/// </summary>
public sealed class RabbitMQDurable : RabbitMQClientTask
{
    protected override string TransportName => "RabbitMQDurable";
    protected override QueueTopology Topology => QueueTopology.Reliable;
    protected override bool IdempotentImport => true;
}
