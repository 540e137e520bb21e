using IntegrationTasks.Transfer;

namespace IntegrationTasks.Grpc;

/// <summary>
/// The gRPC server (HTTP/2 without TLS on its own port) as the host process's "grpc" module
/// (tasks/IntegrationTasks.Host/Grpc), started, watched and stopped by this task. A message over MaxMessageBytes
/// is refused with a status (ResourceExhausted) and a coded log line.
/// </summary>
public sealed class GrpcServer : RecordServiceHostTask
{
    protected override string Module => "grpc";
}

/// <summary>A gRPC client task: the server's address, the batches in flight, the message limit.</summary>
public abstract class GrpcClientTask : TransferClientTask
{
    /// <summary>http://host:port (HTTP/2 without TLS), or https:// with Tls=true.</summary>
    [Required] public string Address { get; set; } = "";

    /// <summary>HTTP/2 over TLS: the server's certificate must come from the authority in TlsFolder and name the address's host.</summary>
    public bool Tls { get; set; }

    /// <summary>Where the authority's certificate is (the server's TlsFolder).</summary>
    public string TlsFolder { get; set; } = "";

    /// <summary>Mutual TLS: present the client certificate in TlsFolder (the server then takes only clients of its authority).</summary>
    public bool ClientCertificates { get; set; }

    /// <summary>The file holding the web service's bearer token (the server's TokenFile); empty: send none.</summary>
    public string TokenFile { get; set; } = "";

    public int MaxMessageBytes { get; set; } = 64 * 1024 * 1024;

    protected override (long Bytes, string Property)? MessageLimit => (MaxMessageBytes, "GrpcMaxMessageBytes");

    protected abstract bool Streaming { get; }

    protected override string TransportName => GetType().Name;

    /// <summary>Each client its own channel and connection, calls and resume loop.</summary>
    protected override bool ServesManyClients => true;

    /// <summary>Unary calls and stream messages wait for their turn before going out (open loop with -p:Rate).</summary>
    protected override bool SendsOnSchedule => true;

    protected override Task<TransferResult> TransferAsync(BatchPlan plan, BatchImporter importer, CancellationToken cancellationToken)
    {
        var scheme = Tls ? Uri.UriSchemeHttps : Uri.UriSchemeHttp;
        if (!Uri.TryCreate(Address, UriKind.Absolute, out var address) || address.Scheme != scheme)
            throw new IntegrationException(ErrorCodes.InvalidParameter, $"Address '{Address}' is not an absolute {scheme}:// URI{(Tls ? " (Tls=true)" : "")}.");
        var client = new GrpcRecordsClient(address, "GrpcServer")
        {
            MaxInFlight = MaxInFlight, MaxMessageBytes = MaxMessageBytes, Deadline = TimeSpan.FromSeconds(TimeoutSeconds),
            Tls = Tls ? Streams.TlsConnector.TrustingFolder(TlsFolder, address.Host, ClientCertificates) : null,
            Token = Hosting.ServiceToken.Load(TokenFile),
        };
        return client.RunAsync(plan, importer, Streaming, Resumption(plan, resumes: true), cancellationToken);
    }
}

/// <summary>One unary call per batch, several in flight.</summary>
public sealed class GrpcClient : GrpcClientTask
{
    protected override bool Streaming => false;
}

/// <summary>One bidirectional stream per transfer.</summary>
public sealed class GrpcStreaming : GrpcClientTask
{
    protected override bool Streaming => true;
}
