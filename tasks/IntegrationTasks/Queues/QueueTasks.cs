using System.Runtime.InteropServices;
using IntegrationTasks.Common;
using IntegrationTasks.Data;
using IntegrationTasks.Hosting;
using IntegrationTasks.Transfer;
using Microsoft.Build.Framework;

namespace IntegrationTasks.Queues;

/// <summary>
/// Starts the suite's private RabbitMQ node (Debian's rabbitmq-server, loopback only, its own data
/// directory and ports) and returns when it accepts connections. It stays registered for the rest
/// of the build: <see cref="StopRabbitMQ"/> stops it, and the end of a failed or cancelled build does.
/// </summary>
public sealed class StartRabbitMQ : IntegrationTask
{
    internal const string RegistrationKey = "IntegrationTasks.RabbitMQ";

    [Required] public string Directory { get; set; } = "";
    public int Port { get; set; } = 5673;
    public int DistributionPort { get; set; } = 25673;
    /// <summary>The Erlang port mapper's port (epmd), loopback only; stopped with the node.</summary>
    public int EpmdPort { get; set; } = 4370;
    public int ReadyTimeoutSeconds { get; set; } = 120;

    /// <summary>Where AMQP listens (the server host's address on two hosts).</summary>
    public string BindAddress { get; set; } = SettingDefaults.BindAddress;

    /// <summary>A command the node runs through, words separated by spaces (<c>ip netns exec NAME</c> on two hosts).</summary>
    public string CommandPrefix { get; set; } = "";

    /// <summary>The broker's most client connections at once (each RabbitMQ client, and each server, holds one); one more is refused with IT3008.</summary>
    public int MaxConnections { get; set; } = 1000;

    /// <summary>Run in the foreground until Ctrl+C, then stop the node (the RabbitMQBroker target, for use by hand).</summary>
    public bool WaitUntilCancelled { get; set; }

    [Output] public int ProcessId { get; private set; }

    protected override bool CancellationIsSuccess => WaitUntilCancelled;

    protected override async Task ExecuteAsync(CancellationToken cancellationToken)
    {
        if (MaxConnections < 1)
            throw new IntegrationException(ErrorCodes.InvalidParameter, $"MaxConnections must be at least 1 (was {MaxConnections}).");
        // A broker for a build's runs (not one started by hand to serve until stopped): SIGTERM fails that build.
        if (!WaitUntilCancelled)
            BuildTermination.Watch();
        if (BuildEngine4.GetRegisteredTaskObject(RegistrationKey, RegisteredTaskObjectLifetime.Build) is NodeHandle running)
        {
            ProcessId = running.Node.ProcessId;
            Log.LogMessage(MessageImportance.High, "RabbitMQ is already running for this build (process {0}).", ProcessId);
            return;
        }
        var options = new RabbitMqNodeOptions
        {
            Directory = Path.GetFullPath(Directory), AmqpPort = Port, DistributionPort = DistributionPort, EpmdPort = EpmdPort,
            BindAddress = BindAddress, CommandPrefix = ServerLaunch.Words(CommandPrefix),
        };
        if (options.CommandPrefix.Count == 0)
            Ports.EnsureFree(BindAddress, Port);
        Log.LogMessage(MessageImportance.High, "Starting RabbitMQ node {0} on {1}:{2} ({3}).", options.NodeName, BindAddress, Port, options.Directory);
        var node = await RabbitMqNode.StartAsync(options, ServerLog.To(Log, "RabbitMQ"), TimeSpan.FromSeconds(ReadyTimeoutSeconds), cancellationToken)
            .ConfigureAwait(false);
        ProcessId = node.ProcessId;
        var handle = new NodeHandle(node);
        try
        {
            await node.SetConnectionLimitAsync(MaxConnections, cancellationToken).ConfigureAwait(false);
        }
        catch
        {
            await handle.StopAsync(CancellationToken.None).ConfigureAwait(false);
            throw;
        }
        BuildEngine4.RegisterTaskObject(RegistrationKey, handle, RegisteredTaskObjectLifetime.Build, allowEarlyCollection: false);
        Log.LogMessage(MessageImportance.High, "RabbitMQ is ready on {0}:{1}.", BindAddress, Port);
        if (!WaitUntilCancelled)
            return;
        try
        {
            await Task.Delay(Timeout.Infinite, cancellationToken).ConfigureAwait(false);
        }
        finally
        {
            BuildEngine4.UnregisterTaskObject(RegistrationKey, RegisteredTaskObjectLifetime.Build);
            await handle.StopAsync(CancellationToken.None).ConfigureAwait(false);
            Log.LogMessage(MessageImportance.High, "RabbitMQ stopped.");
        }
    }

    /// <summary>
    /// What MSBuild disposes at the end of the build if nobody stopped the node. The running node, stopped once: by StopRabbitMQ, at the end of the build, or when the build is terminated (SIGTERM) or loses its terminal (SIGHUP) —
    /// the broker does not watch its input as the suite's servers do, so without this a killed build would leave it running.
    /// </summary>
    internal sealed class NodeHandle : IDisposable
    {
        private readonly PosixSignalRegistration?[] _terminated;
        private readonly Lock _gate = new();
        private Task? _stop;

        public NodeHandle(RabbitMqNode node)
        {
            Node = node;
            // SIGTERM: a service manager or kill; SIGHUP: the terminal the build ran in was closed (a tmux session killed).
            _terminated = OperatingSystem.IsLinux() || OperatingSystem.IsMacOS()
                ? [PosixSignalRegistration.Create(PosixSignal.SIGTERM, _ => Dispose()), PosixSignalRegistration.Create(PosixSignal.SIGHUP, _ => Dispose())]
                : [];
        }

        public RabbitMqNode Node { get; }

        /// <summary>
        /// The one stop, awaited by every caller: a build terminated with SIGTERM stops the node from the signal's thread, the
        /// client then fails fast and the build ends and disposes this — returning at once there let the process exit while the
        /// signal's thread still waited to kill epmd, and epmd was left running.
        /// </summary>
        public Task StopAsync(CancellationToken cancellationToken)
        {
            lock (_gate)
                return _stop ??= StopNodeAsync(cancellationToken);
        }

        private async Task StopNodeAsync(CancellationToken cancellationToken)
        {
            foreach (var registration in _terminated)
                registration?.Dispose();
            await Node.StopAsync(cancellationToken).ConfigureAwait(false);
            Node.Dispose();
        }

        // Build teardown or a signal: nothing else to wait for.
        public void Dispose() => StopAsync(CancellationToken.None).GetAwaiter().GetResult();
    }
}

/// <summary>Stops the node started by <see cref="StartRabbitMQ"/> (and its epmd).</summary>
public sealed class StopRabbitMQ : IntegrationTask
{
    protected override async Task ExecuteAsync(CancellationToken cancellationToken)
    {
        if (BuildEngine4.UnregisterTaskObject(StartRabbitMQ.RegistrationKey, RegisteredTaskObjectLifetime.Build) is not StartRabbitMQ.NodeHandle handle)
            return;
        await handle.StopAsync(cancellationToken).ConfigureAwait(false);
        Log.LogMessage(MessageImportance.High, "RabbitMQ stopped.");
    }
}

/// <summary>The series' RabbitMQServer: answers request messages until cancelled (Ctrl+C) or stopped by the suite.</summary>
public sealed class RabbitMQServer : TransferServerTask
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
        var server = _server = new QueueServer(source, new BrokerOptions { HostName = RabbitMQHostName, Port = RabbitMQPort }, topology, EventLog)
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

    protected override (long Bytes, string Property)? MessageLimit => (MaxMessageBytes, "RabbitMQMaxMessageBytes");

    protected abstract QueueTopology Topology { get; }

    /// <summary>Each client its own connection, reply queue and resume loop; the server's consumer serves them all.</summary>
    protected override bool ServesManyClients => true;

    /// <summary>Requests are published on the schedule (open loop with -p:Rate).</summary>
    protected override bool SendsOnSchedule => true;

    protected virtual Task<IReadOnlySet<int>> CompleteBatchesAsync(BatchPlan plan, CancellationToken cancellationToken) =>
        Task.FromResult<IReadOnlySet<int>>(new HashSet<int>());

    protected override async Task<TransferResult> TransferAsync(BatchPlan plan, BatchImporter importer, CancellationToken cancellationToken)
    {
        var complete = await CompleteBatchesAsync(plan, cancellationToken).ConfigureAwait(false);
        if (complete.Count > 0)
            Log.LogMessage(MessageImportance.High, "{0}: {1} of {2} batches are already in ClientTable; resuming with the rest.",
                TransportName, complete.Count, plan.TotalBatches);
        var client = new QueueClient(new BrokerOptions { HostName = RabbitMQHostName, Port = RabbitMQPort }, Topology.ForClient(ClientIndex)) { MaxInFlight = MaxInFlight, MaxMessageBytes = MaxMessageBytes };
        // Durable queues keep every request and answer across a broken connection: a new one asks again for what is not committed
        // (answers that come twice are ignored on import). The fast queues promise nothing, so a break fails cleanly.
        var resumption = Resumption(plan, resumes: Topology.Durable);
        foreach (var batch in complete)
            resumption.Committed.Add(batch);
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

    protected override async Task<IReadOnlySet<int>> CompleteBatchesAsync(BatchPlan plan, CancellationToken cancellationToken)
    {
        var counts = new int[plan.TotalBatches];
        var firstId = plan.FirstId(0); // this client's share
        await foreach (var row in RecordReader.ReadOrderedAsync(ClientDatabase!, RecordTable.Client, firstId, firstId + plan.Records - 1, cancellationToken)
                           .ConfigureAwait(false))
            counts[plan.BatchOf(row.Id)]++;
        return Enumerable.Range(0, plan.TotalBatches).Where(b => counts[b] == plan.BatchSize).ToHashSet();
    }
}
