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
public sealed class RabbitMQServer : TransferServerTask
{
    public string RabbitMQHostName { get; set; } = "127.0.0.1";
    public int RabbitMQPort { get; set; } = SettingDefaults.RabbitMQPort;

    /// <summary>Serve the durable queues (RabbitMQDurable) instead of the fast ones (RabbitMQClientTest).</summary>
    public bool Durable { get; set; }

    public int Prefetch { get; set; } = 8;

    /// <summary>The broker's user and password (<see cref="BrokerCredentials"/>); empty: guest, which the suite's broker takes only from loopback.</summary>
    public string CredentialsFile { get; set; } = "";

    /// <summary>AMQPS: the broker's certificate must come from the authority in TlsFolder and name RabbitMQHostName.</summary>
    public bool Tls { get; set; }
    public string TlsFolder { get; set; } = "";

    /// <summary>Mutual TLS (with Tls): present the client certificate in TlsFolder (the broker then takes only clients of its authority).</summary>
    public bool ClientCertificates { get; set; }

    private QueueServer? _server;

    protected override long? RequestsWaiting => _server?.RequestsWaiting;

    protected override async Task<(string Endpoint, Func<CancellationToken, Task> Serve)> StartAsync(RecordSource source, CancellationToken cancellationToken)
    {
        var topology = Durable ? QueueTopology.Reliable : QueueTopology.Fast;
        var server = _server = new QueueServer(source, BrokerOptions.For(RabbitMQHostName, RabbitMQPort, CredentialsFile, BrokerClientTls.For(Tls, TlsFolder, ClientCertificates)), topology, EventLog)
        {
            Prefetch = Prefetch,
        };
        var serve = await server.StartAsync(cancellationToken).ConfigureAwait(false);
        return ($"amqp://{RabbitMQHostName}:{RabbitMQPort}/{topology.RequestQueue}", serve);
    }
}

/// <summary>A RabbitMQ client task: the broker, and the topology (fast or durable) its subclass names.</summary>
public abstract class RabbitMQClientTask : TransferClientTask
{
    public string RabbitMQHostName { get; set; } = "127.0.0.1";
    public int RabbitMQPort { get; set; } = SettingDefaults.RabbitMQPort;

    /// <summary>The largest reply the client accepts (a message's body).</summary>
    public int MaxMessageBytes { get; set; } = SettingDefaults.MaxFrameBytes;

    /// <summary>The broker's user and password (<see cref="BrokerCredentials"/>); empty: guest, which the suite's broker takes only from loopback.</summary>
    public string CredentialsFile { get; set; } = "";

    /// <summary>AMQPS: the broker's certificate must come from the authority in TlsFolder and name RabbitMQHostName.</summary>
    public bool Tls { get; set; }
    public string TlsFolder { get; set; } = "";

    /// <summary>Mutual TLS (with Tls): present the client certificate in TlsFolder (the broker then takes only clients of its authority).</summary>
    public bool ClientCertificates { get; set; }

    protected override (long Bytes, string Property)? MessageLimit => (MaxMessageBytes, "RabbitMQMaxMessageBytes");

    protected abstract QueueTopology Topology { get; }

    /// <summary>Each client its own connection, reply queue and resume loop; the server's consumer serves them all.</summary>
    protected override bool ServesManyClients => true;

    /// <summary>Requests are published on the schedule (open loop with -p:Rate).</summary>
    protected override bool SendsOnSchedule => true;

    protected override async Task<TransferResult> TransferAsync(BatchPlan plan, BatchImporter importer, CancellationToken cancellationToken)
    {
        var client = new QueueClient(BrokerOptions.For(RabbitMQHostName, RabbitMQPort, CredentialsFile, BrokerClientTls.For(Tls, TlsFolder, ClientCertificates)), Topology.ForClient(ClientIndex)) { MaxInFlight = MaxInFlight, MaxMessageBytes = MaxMessageBytes };
        // Durable queues keep every request and answer across a broken connection: a new one asks again for what is not committed
        // (answers that come twice are ignored on import). The fast queues promise nothing, so a break fails cleanly.
        var resumption = Resumption(plan, resumes: Topology.Durable);
        if (Topology.Durable)
            await SkipBatchesAlreadyImportedAsync(plan, resumption, cancellationToken).ConfigureAwait(false);
        long sent = 0, received = 0;
        await resumption.RunAsync(async (missing, token) =>
        {
            var result = await client.RunAsync(plan, importer, missing, resumption.Committed, resumption.MarkConnected, token).ConfigureAwait(false);
            sent += result.BytesSent;
            received += result.BytesReceived;
        }, cancellationToken, e => e is IntegrationException { Code: ErrorCodes.ConnectionLost or ErrorCodes.BrokerUnavailable }).ConfigureAwait(false);
        return new TransferResult(sent, received);
    }
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
