using IntegrationTasks.Data;
using IntegrationTasks.Transfer;

namespace IntegrationTasks.Wcf;

/// <summary>
/// A client of the series' web service: the binding and the variant are all a concrete task names (the twelve series' names
/// below, one line each);
/// the service's address, the calls in flight and the message quota are its parameters.
/// </summary>
public abstract class WcfClientTask(WcfBinding binding, WcfVariant variant) : TransferClientTask
{
    /// <summary>The service's address: http://host:port/IntegrationTestsService.svc or net.tcp://host:port/IntegrationTestsService.</summary>
    [Required] public string Address { get; set; } = "";

    /// <summary>The largest reply the client accepts (the binding's MaxReceivedMessageSize and reader quotas).</summary>
    public long MaxMessageBytes { get; set; } = 64L * 1024 * 1024;

    /// <summary>SOAP over https://: the server's certificate must come from the authority in TlsFolder and name the address's host.</summary>
    public bool Tls { get; set; }

    /// <summary>Where the authority's certificate is (the server's TlsFolder).</summary>
    public string TlsFolder { get; set; } = "";

    /// <summary>Mutual TLS (with Tls): present the client certificate in TlsFolder (the server then takes only clients of its authority).</summary>
    public bool ClientCertificates { get; set; }

    /// <summary>SOAP only: the file holding the web service's bearer token (the server's TokenFile); empty: send none.</summary>
    public string TokenFile { get; set; } = "";

    protected override (long Bytes, string Property)? MessageLimit => (MaxMessageBytes, "WcfMaxMessageBytes");

    protected WcfBinding Binding { get; } = binding;
    protected WcfVariant Variant { get; } = variant;

    protected override string TransportName => GetType().Name;

    /// <summary>Each client its own channel (its own connection), calls and resume loop.</summary>
    protected override bool ServesManyClients => true;

    /// <summary>The asynchronous variants' calls wait for their turn on the schedule (open loop with -p:Rate); the others call from a blocked thread.</summary>
    protected override bool SendsOnSchedule => Variant is WcfVariant.SmallBatchesAsync or WcfVariant.SmallBatchesAsyncSyncServer;

    protected override Task<TransferResult> TransferAsync(BatchPlan plan, BatchImporter importer, CancellationToken cancellationToken)
    {
        if (!Uri.TryCreate(Address, UriKind.Absolute, out var address))
            throw new IntegrationException(ErrorCodes.InvalidParameter, $"Address '{Address}' is not an absolute URI.");
        if (Binding == WcfBinding.Soap && Tls != (address.Scheme == Uri.UriSchemeHttps))
            throw new IntegrationException(ErrorCodes.InvalidParameter, $"Address '{Address}' and Tls={Tls} disagree: SOAP over TLS is https://, without it http://.");
        if (Binding == WcfBinding.NetTcp && TokenFile.Length > 0)
            throw new IntegrationException(ErrorCodes.InvalidParameter, "TokenFile is for SOAP over HTTP: net.tcp's server takes client certificates (ClientCertificates=true) instead.");
        var client = new WcfClient(Binding, Variant, address, Binding == WcfBinding.Soap ? "SoapServer" : "NetTcpServer")
        {
            MaxInFlight = MaxInFlight, MaxMessageBytes = MaxMessageBytes, CallTimeout = TimeSpan.FromSeconds(TimeoutSeconds),
            Authority = Tls ? Streams.TlsConnector.AuthorityIn(TlsFolder) : null,
            ClientCertificate = Tls && ClientCertificates ? Hosting.TlsCertificates.In(TlsFolder).LoadClientContext().TargetCertificate : null,
            Token = Hosting.ServiceToken.Load(TokenFile),
        };
        return client.RunAsync(plan, importer, Resumption(plan, resumes: true), cancellationToken);
    }
}

/// <summary>
/// The series' SOAP service on Kestrel (SoapCore, SOAP 1.1 as BasicHttpBinding speaks it): the host process's
/// "soap" module (tasks/IntegrationTasks.Host/Wcf), started, watched and stopped by this task. WSDL at ?wsdl.
/// </summary>
public sealed class SoapServer : RecordServiceHostTask
{
    protected override string Module => "soap";
}

/// <summary>SOAP: one call per record.</summary>
public sealed class SoapSmallRequests() : WcfClientTask(WcfBinding.Soap, WcfVariant.SmallRequests);

/// <summary>SOAP: one synchronous call per batch.</summary>
public sealed class SoapSmallBatches() : WcfClientTask(WcfBinding.Soap, WcfVariant.SmallBatches);

/// <summary>SOAP: batch calls without waiting for each other, against the concurrent operation.</summary>
public sealed class SoapSmallBatchesAsync() : WcfClientTask(WcfBinding.Soap, WcfVariant.SmallBatchesAsync);

/// <summary>SOAP: batch calls without waiting for each other, against the sequential operation.</summary>
public sealed class SoapSmallBatchesAsyncSyncServer() : WcfClientTask(WcfBinding.Soap, WcfVariant.SmallBatchesAsyncSyncServer);

/// <summary>SOAP: a thread per batch (bounded).</summary>
public sealed class SoapSmallBatchesMultiThread() : WcfClientTask(WcfBinding.Soap, WcfVariant.SmallBatchesMultiThread);

/// <summary>SOAP: a task per batch (bounded).</summary>
public sealed class SoapSmallBatchesTask() : WcfClientTask(WcfBinding.Soap, WcfVariant.SmallBatchesTask);

/// <summary>net.tcp: one call per record.</summary>
public sealed class NetTcpSmallRequests() : WcfClientTask(WcfBinding.NetTcp, WcfVariant.SmallRequests);

/// <summary>net.tcp: one synchronous call per batch.</summary>
public sealed class NetTcpSmallBatches() : WcfClientTask(WcfBinding.NetTcp, WcfVariant.SmallBatches);

/// <summary>net.tcp: batch calls without waiting for each other, against the concurrent operation.</summary>
public sealed class NetTcpSmallBatchesAsync() : WcfClientTask(WcfBinding.NetTcp, WcfVariant.SmallBatchesAsync);

/// <summary>net.tcp: batch calls without waiting for each other, against the sequential operation.</summary>
public sealed class NetTcpSmallBatchesAsyncSyncServer() : WcfClientTask(WcfBinding.NetTcp, WcfVariant.SmallBatchesAsyncSyncServer);

/// <summary>net.tcp: a thread per batch (bounded).</summary>
public sealed class NetTcpSmallBatchesMultiThread() : WcfClientTask(WcfBinding.NetTcp, WcfVariant.SmallBatchesMultiThread);

/// <summary>net.tcp: a task per batch (bounded).</summary>
public sealed class NetTcpSmallBatchesTask() : WcfClientTask(WcfBinding.NetTcp, WcfVariant.SmallBatchesTask);

/// <summary>
/// The series' net.tcp service: the same IntegrationTestsService behind our own .NET Message Framing endpoint
/// (<see cref="NetTcp.NetTcpServiceHost"/>), in this task's process; until Ctrl+C or stopped by the suite.
/// </summary>
public sealed class NetTcpServer : TransferServerTask
{
    [Required] public int Port { get; set; } = 8084;
    public string BindAddress { get; set; } = SettingDefaults.BindAddress;

    /// <summary>Database connections the service's lookups share, and how many one concurrent batch call uses.</summary>
    public int Connections { get; set; } = 8;
    public int Answerers { get; set; } = SettingDefaults.Answerers;

    public int MaxMessageBytes { get; set; } = 64 * 1024 * 1024;
    public int MaxBatchRecords { get; set; } = SettingDefaults.MaxBatchRecords;

    /// <summary>Requests of one connection answered at once.</summary>
    public int MaxPendingRequests { get; set; } = 8;

    /// <summary>A connection that sends no complete record for this many seconds (idle, or stalled mid-record) is dropped with IT3007.</summary>
    public int ConnectionTimeoutSeconds { get; set; } = SettingDefaults.ConnectionTimeoutSeconds;

    /// <summary>Clients (connections) served at once; one more gets a fault with IT3008 for its first call, and the others go on.</summary>
    public int MaxConnections { get; set; } = 100;

    /// <summary>net.tcp's transport security: TLS by its stream upgrade, with the certificate in TlsFolder (made there when missing).</summary>
    public bool Tls { get; set; }
    public string TlsFolder { get; set; } = "";

    /// <summary>Mutual TLS (with Tls): serve only clients presenting a certificate from the authority in TlsFolder.</summary>
    public bool ClientCertificates { get; set; }

    protected override async Task<(string Endpoint, Func<CancellationToken, Task> Serve)> StartAsync(RecordSource source, CancellationToken cancellationToken)
    {
        if (MaxPendingRequests < 1 || MaxMessageBytes < 1024 || ConnectionTimeoutSeconds < 1 || MaxConnections < 1)
            throw new IntegrationException(ErrorCodes.InvalidParameter,
                $"MaxPendingRequests must be at least 1 (was {MaxPendingRequests}), MaxMessageBytes at least 1024 (was {MaxMessageBytes}), " +
                $"ConnectionTimeoutSeconds at least 1 (was {ConnectionTimeoutSeconds}) and MaxConnections at least 1 (was {MaxConnections}).");
        Hosting.ListenerExposure.RequireClientCertificatesBeyondLoopback(nameof(NetTcpServer), BindAddress, Tls, ClientCertificates);
        var service = await IntegrationTestsService.OpenAsync(source, Connections, Answerers, MaxBatchRecords, cancellationToken).ConfigureAwait(false);
        var host = new NetTcp.NetTcpServiceHost(service, new NetTcp.NetTcpOptions
        {
            BindAddress = BindAddress, Port = Port, MaxMessageBytes = MaxMessageBytes, MaxPendingRequests = MaxPendingRequests,
            ConnectionTimeout = TimeSpan.FromSeconds(ConnectionTimeoutSeconds), MaxConnections = MaxConnections,
            Tls = Tls ? Hosting.TlsCertificates.Ensure(Hosting.TlsCertificates.RequireFolder(TlsFolder), Hosting.TlsCertificates.NamesFor(BindAddress)).ServerOptions(ClientCertificates) : null,
        }, EventLog);
        System.Net.IPEndPoint endpoint;
        try
        {
            endpoint = host.Start();
        }
        catch
        {
            await service.DisposeAsync().ConfigureAwait(false);
            throw;
        }
        return ($"net.tcp://{endpoint}{ServiceNames.NetTcpPath}", async stop =>
        {
            await using (service)
                await host.RunAsync(stop).ConfigureAwait(false);
        });
    }
}
