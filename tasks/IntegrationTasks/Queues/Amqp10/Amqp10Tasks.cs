using IntegrationTasks.Data;
using IntegrationTasks.Transfer;

namespace IntegrationTasks.Queues.Amqp10;

/// <summary>The AMQP 1.0 server on the suite's RabbitMQ: answers request messages until cancelled (Ctrl+C) or stopped by the suite.</summary>
public sealed class Amqp10Server : BrokerServerTask
{
    public string RabbitMQHostName { get; set; } = "127.0.0.1";
    public int RabbitMQPort { get; set; } = SettingDefaults.RabbitMQPort;

    /// <summary>Serve the unsettled queues (Amqp10Durable) instead of the settled ones (Amqp10Request).</summary>
    public bool Durable { get; set; }

    /// <summary>The request link's credit: how many requests the broker hands this server before it has settled some.</summary>
    public int Prefetch { get; set; } = 8;

    protected override async Task<(string Endpoint, Func<CancellationToken, Task> Serve)> StartAsync(RecordSource source, CancellationToken cancellationToken)
    {
        var topology = Durable ? Amqp10Topology.AtLeastOnce : Amqp10Topology.Settled;
        var responder = new Amqp10Responder(source, BrokerOptions.For(RabbitMQHostName, RabbitMQPort, CredentialsFile, ClientTls), topology, EventLog)
        {
            Prefetch = Prefetch,
        };
        var serve = await responder.StartAsync(cancellationToken).ConfigureAwait(false);
        return ($"amqp://{RabbitMQHostName}:{RabbitMQPort}{topology.RequestAddress} (AMQP 1.0)", serve);
    }
}

/// <summary>An AMQP 1.0 client task: the broker, and how its subclass's links settle.</summary>
public abstract class Amqp10ClientTask : BrokerClientTask
{
    public string RabbitMQHostName { get; set; } = "127.0.0.1";
    public int RabbitMQPort { get; set; } = SettingDefaults.RabbitMQPort;

    /// <summary>The largest reply the client accepts (a message's body).</summary>
    public int MaxMessageBytes { get; set; } = SettingDefaults.MaxFrameBytes;

    protected override (long Bytes, string Property)? MessageLimit => (MaxMessageBytes, "RabbitMQMaxMessageBytes");

    private protected abstract Amqp10Topology Topology { get; }

    /// <summary>Unsettled, nothing is forgotten across a broken connection: a new one asks again for what is not committed. Settled promises nothing.</summary>
    protected override bool Resumes => Topology.Unsettled;

    /// <summary>This run's requests' id (each client's and batch's under it): answers to an earlier run on the same reply queue are left.</summary>
    private readonly string _runId = Guid.NewGuid().ToString("N")[..12];

    protected override Task<TransferResult> AttemptAsync(BatchPlan plan, BatchImporter importer, IReadOnlyList<int> pending, ResumingTransfer resumption,
        CancellationToken cancellationToken) =>
        new Amqp10Requester(BrokerOptions.For(RabbitMQHostName, RabbitMQPort, CredentialsFile, ClientTls), Topology, ClientIndex, ClientMachine ?? "", _runId)
            {
                MaxInFlight = MaxInFlight, MaxMessageBytes = MaxMessageBytes,
            }
            .RunAsync(plan, importer, pending, resumption.Committed, resumption.MarkConnected, cancellationToken);
}

/// <summary>
/// AMQP 1.0 request/reply with settled (pre-settled) deliveries: at most once, the counterpart of RabbitMQClientTest in the
/// enterprise brokers' standard protocol.
/// </summary>
public sealed class Amqp10Request : Amqp10ClientTask
{
    protected override string TransportName => "Amqp10Request";
    private protected override Amqp10Topology Topology => Amqp10Topology.Settled;
}

/// <summary>
/// AMQP 1.0 with unsettled deliveries, durable messages, each accepted only after its work: a client or server killed mid-run and
/// started again finishes with every row exactly once (batches already whole are not asked for again; repeats are imported once).
/// </summary>
public sealed class Amqp10Durable : Amqp10ClientTask
{
    protected override string TransportName => "Amqp10Durable";
    private protected override Amqp10Topology Topology => Amqp10Topology.AtLeastOnce;
    protected override bool IdempotentImport => true;
}
