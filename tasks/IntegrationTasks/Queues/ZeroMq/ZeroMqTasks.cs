using IntegrationTasks.Data;
using IntegrationTasks.Transfer;

namespace IntegrationTasks.Queues.ZeroMq;

/// <summary>The ZeroMQ server (ROUTER): answers its clients' requests until cancelled or stopped by the suite; no broker.</summary>
public sealed class ZeroMqServer : TransferServerTask
{
    public string Endpoint { get; set; } = ZeroMqDefaults.LocalEndpoint;
    public int MaxMessageBytes { get; set; } = SettingDefaults.MaxFrameBytes;
    public int MaxBatchRecords { get; set; } = SettingDefaults.MaxBatchRecords;

    /// <summary>CurveZMQ (ZeroMQ's own encryption: no TLS carries its protocol), with the server's key pair in TlsFolder.</summary>
    public bool Tls { get; set; }
    public string TlsFolder { get; set; } = "";

    protected override async Task<(string Endpoint, Func<CancellationToken, Task> Serve)> StartAsync(RecordSource source, CancellationToken cancellationToken)
    {
        // tcp://host:port, or a wildcard (tcp://*:port) that listens on every address.
        var host = Uri.TryCreate(Endpoint.Replace("://*:", "://0.0.0.0:", StringComparison.Ordinal), UriKind.Absolute, out var uri) ? uri.Host : Endpoint;
        Hosting.ListenerExposure.RequireLoopback(nameof(ZeroMqServer), host,
            "the suite does not set up CurveZMQ, ZeroMQ's own authentication, yet (no TLS carries ZeroMQ's protocol).");
        var responder = new ZeroMqResponder(source, Endpoint, EventLog)
        {
            MaxMessageBytes = MaxMessageBytes, MaxBatchRecords = MaxBatchRecords, Curve = Tls ? ZeroMqCurve.ServerCertificate(TlsFolder) : null,
        };
        return (Endpoint, await responder.StartAsync(cancellationToken).ConfigureAwait(false));
    }
}

/// <summary>What the two ZeroMQ clients share: the server's endpoint, the largest reply, and a lost connection resumed.</summary>
public abstract class ZeroMqClientTask : ResumingQueueClientTask
{
    public string Endpoint { get; set; } = ZeroMqDefaults.LocalEndpoint;

    /// <summary>The largest reply the client reads (ZeroMQ drops a connection that sends more).</summary>
    public int MaxMessageBytes { get; set; } = SettingDefaults.MaxFrameBytes;

    /// <summary>CurveZMQ: the server must prove the public key in TlsFolder (its server's).</summary>
    public bool Tls { get; set; }
    public string TlsFolder { get; set; } = "";

    protected override (long Bytes, string Property)? MessageLimit => (MaxMessageBytes, "MaxFrameBytes");

    protected abstract bool Pipelined { get; }

    protected override Task<TransferResult> AttemptAsync(BatchPlan plan, BatchImporter importer, IReadOnlyList<int> pending, ResumingTransfer resumption,
        CancellationToken cancellationToken) =>
        new ZeroMqRequester(Endpoint, Pipelined)
            {
                MaxInFlight = MaxInFlight, MaxMessageBytes = MaxMessageBytes, CurveServerKey = Tls ? ZeroMqCurve.ServerPublicKey(TlsFolder) : null,
            }
            .RunAsync(plan, importer, pending, resumption.Committed, resumption.MarkConnected, cancellationToken);
}

/// <summary>ZeroMQ request/reply in the series' manner: a REQ socket, one batch asked for and answered at a time.</summary>
public sealed class ZeroMqRequest : ZeroMqClientTask
{
    protected override string TransportName => "ZeroMqRequest";
    protected override bool Pipelined => false;
}

/// <summary>ZeroMQ DEALER/ROUTER: up to MaxInFlight batches asked for at once, each reply tagged with its batch.</summary>
public sealed class ZeroMqDealer : ZeroMqClientTask
{
    protected override string TransportName => "ZeroMqDealer";
    protected override bool Pipelined => true;
}

/// <summary>The ZeroMQ transports' own defaults (targets/Queues/ZeroMq.targets states each too).</summary>
public static class ZeroMqDefaults
{
    /// <summary>The ZeroMQ server's port.</summary>
    public const int ZeroMqPort = 8088;

    internal static readonly string LocalEndpoint = $"tcp://{SettingDefaults.HostName}:{ZeroMqPort}";
}
