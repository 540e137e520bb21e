using IntegrationTasks.Data;
using IntegrationTasks.Streams;
using IntegrationTasks.Transfer;
using IntegrationTasks.Wire;

namespace IntegrationTasks.Tcp;

/// <summary>
/// A TCP server task: the series' parameters, plus the generation's frame format, socket I/O and
/// threading model (the only things the generations' subclasses choose). Serves until cancelled
/// (Ctrl+C) or stopped by the suite.
/// </summary>
public abstract class TcpServerTask : TransferServerTask
{
    public int Port { get; set; } = 8081;

    /// <summary>Loopback by default; another address (0.0.0.0 to serve other machines) only with Tls and ClientCertificates.</summary>
    public string BindAddress { get; set; } = SettingDefaults.BindAddress;

    public int MaxFrameBytes { get; set; } = SettingDefaults.MaxFrameBytes;

    /// <summary>Requests read ahead per connection before the socket stops being read (back-pressure).</summary>
    public int MaxPendingRequests { get; set; } = 8;

    /// <summary>A connection that sends no complete request for this many seconds (idle, or stalled mid-frame) is dropped with IT3007.</summary>
    public int ConnectionTimeoutSeconds { get; set; } = SettingDefaults.ConnectionTimeoutSeconds;

    /// <summary>The most records one request may ask for; a larger request is refused (IT2005) while it is read.</summary>
    public int MaxBatchRecords { get; set; } = SettingDefaults.MaxBatchRecords;

    /// <summary>Clients served at once; one more is refused with IT3008, which it receives, and the others go on.</summary>
    public int MaxConnections { get; set; } = 100;

    /// <summary>Tcp (BindAddress:Port, the series') or Unix (a Unix domain socket at SocketPath: the same models over another stream).</summary>
    public string Connector { get; set; } = nameof(Streams.Connector.Tcp);

    /// <summary>The Unix socket's file, with Connector=Unix.</summary>
    public string SocketPath { get; set; } = "";

    /// <summary>Every connection over TLS (1.2 or 1.3), with the server certificate in TlsFolder (made there by a private authority when missing).</summary>
    public bool Tls { get; set; }

    /// <summary>Where the authority's and the server's certificates are (the build's default: artifacts/tls).</summary>
    public string TlsFolder { get; set; } = "";

    /// <summary>Mutual TLS: serve only clients presenting a certificate from the authority in TlsFolder.</summary>
    public bool ClientCertificates { get; set; }

    protected virtual FrameFormat Format => FrameFormat.Plain;
    protected virtual StreamIo Io => StreamIo.Streams;
    protected abstract ServerModel CreateModel();

    internal static string RequireSocketPath(string path) => path.Length > 0 ? path
        : throw new IntegrationException(ErrorCodes.InvalidParameter, "Connector=Unix needs SocketPath (the socket's file; -p:SocketPath=…).");

    protected override Task<(string Endpoint, Func<CancellationToken, Task> Serve)> StartAsync(RecordSource source, CancellationToken cancellationToken)
    {
        if (MaxPendingRequests < 1 || ConnectionTimeoutSeconds < 1 || MaxBatchRecords < 1 || MaxConnections < 1)
            throw new IntegrationException(ErrorCodes.InvalidParameter,
                $"MaxPendingRequests ({MaxPendingRequests}), ConnectionTimeoutSeconds ({ConnectionTimeoutSeconds}), MaxBatchRecords ({MaxBatchRecords}) and MaxConnections ({MaxConnections}) must be at least 1.");
        var options = new StreamServerOptions
        {
            MaxFrameBytes = MaxFrameBytes, Format = Format, Io = Io,
            ConnectionTimeout = TimeSpan.FromSeconds(ConnectionTimeoutSeconds), MaxBatchRecords = MaxBatchRecords, MaxConnections = MaxConnections,
            Tls = Tls ? Hosting.TlsCertificates.Ensure(Hosting.TlsCertificates.RequireFolder(TlsFolder), Hosting.TlsCertificates.NamesFor(BindAddress)).ServerOptions(ClientCertificates) : null,
        };
        var connector = StreamConnections.Parse(Connector);
        if (connector == Streams.Connector.Tcp)
            Hosting.ListenerExposure.RequireClientCertificatesBeyondLoopback(GetType().Name, BindAddress, Tls, ClientCertificates);
        IStreamListener listener = connector switch
        {
            Streams.Connector.Unix => new UnixStreamListener(RequireSocketPath(SocketPath)),
            _ => new TcpStreamListener(BindAddress, Port),
        };
        var server = new StreamServerHost(source, listener, options, CreateModel(), EventLog);
        Func<CancellationToken, Task> serve = async token =>
        {
            await using (server)
                await server.RunAsync(token).ConfigureAwait(false);
        };
        return Task.FromResult((server.Endpoint, serve));
    }
}

/// <summary>A TCP client task: the stream client over TCP (HostName:Port) or, with Connector=Unix, the server's Unix socket.</summary>
public abstract class TcpClientTask : StreamClientTask
{
    [Required]
    public string HostName { get; set; } = SettingDefaults.HostName;

    public int Port { get; set; } = 8081;

    /// <summary>Tcp (HostName:Port) or Unix (the server's socket at SocketPath).</summary>
    public string Connector { get; set; } = nameof(Streams.Connector.Tcp);

    /// <summary>The Unix socket's file, with Connector=Unix.</summary>
    public string SocketPath { get; set; } = "";

    /// <summary>Over TLS: the server's certificate must come from the authority in TlsFolder and name HostName.</summary>
    public bool Tls { get; set; }

    /// <summary>Where the authority's certificate is (the server's TlsFolder).</summary>
    public string TlsFolder { get; set; } = "";

    /// <summary>Mutual TLS: present the client certificate in TlsFolder (the server then takes only clients of its authority).</summary>
    public bool ClientCertificates { get; set; }

    protected override IStreamConnector CreateConnector()
    {
        IStreamConnector plain = StreamConnections.Parse(Connector) switch
        {
            Streams.Connector.Unix => new UnixConnector(TcpServerTask.RequireSocketPath(SocketPath)),
            _ => new TcpConnector(HostName, Port),
        };
        return Tls ? new TlsConnector(plain, TlsConnector.TrustingFolder(TlsFolder, HostName, ClientCertificates), Hosting.TlsCertificates.HandshakeTimeout(TimeoutSeconds)) : plain;
    }
}

// ---- the series' generations: each names its format, I/O and threading model, nothing else ----

/// <summary>TCP 1 server (TcpTestServer): one request at a time per connection.</summary>
public sealed class TcpTestServer : TcpServerTask
{
    protected override ServerModel CreateModel() => new LockStepServerModel();
}

/// <summary>TCP 2 server (TcpTestServer2): receive, answer in order and send as separate loops.</summary>
public sealed class TcpServer2 : TcpServerTask
{
    protected override ServerModel CreateModel() => new PipelinedServerModel(answerers: 1, MaxPendingRequests);
}

/// <summary>TCP 3 server (TcpTestServer3): tagged frames, several requests of one connection answered at once, out of order.</summary>
public sealed class TcpTestServer3 : TcpServerTask
{
    /// <summary>Requests of one connection answered concurrently, each answerer with its own database connection.</summary>
    public int Answerers { get; set; } = SettingDefaults.Answerers;

    protected override FrameFormat Format => FrameFormat.Tagged;

    protected override ServerModel CreateModel() => Answerers >= 1
        ? new PipelinedServerModel(Answerers, MaxPendingRequests)
        : throw new IntegrationException(ErrorCodes.InvalidParameter, $"Answerers must be at least 1 (was {Answerers}).");
}

/// <summary>TCP 4 server (TcpTestServer4): TCP 2's model on System.IO.Pipelines.</summary>
public sealed class TcpTestServer4 : TcpServerTask
{
    protected override StreamIo Io => StreamIo.Pipelines;
    protected override ServerModel CreateModel() => new PipelinedServerModel(answerers: 1, MaxPendingRequests);
}

/// <summary>TCP 1, single thread (TcpClientSingleThreadTest): send, receive, import, repeat.</summary>
public sealed class TcpClientSingleThreadTest : TcpClientTask
{
    protected override string TransportName => "TcpClientSingleThreadTest";
    protected override string ServerTarget => "TcpTestServer";
    protected override ClientModel CreateModel() => new LockStepClientModel(importOnWorker: false);
}

/// <summary>TCP 1, multi-thread (TcpClientMultiThreadTest): lock-step on the network, imports on a second loop.</summary>
public sealed class TcpClientMultiThreadTest : TcpClientTask
{
    protected override string TransportName => "TcpClientMultiThreadTest";
    protected override string ServerTarget => "TcpTestServer";
    protected override ClientModel CreateModel() => new LockStepClientModel(importOnWorker: true);
}

/// <summary>TCP 2 (TcpClientMultiThreadTest2): pipelined requests, streamed responses, separate import.</summary>
public sealed class TcpClient2 : TcpClientTask
{
    protected override string TransportName => "TcpClient2";
    protected override string ServerTarget => "TcpServer2";
    protected override ClientModel CreateModel() => new PipelinedClientModel(MaxInFlight);
    protected override bool Resumes => true;
}

/// <summary>TCP 3 (TcpClientMultiThreadTest3): TCP 2 with tagged frames; responses matched by batch id.</summary>
public sealed class TcpClientMultiThreadTest3 : TcpClientTask
{
    protected override string TransportName => "TcpClientMultiThreadTest3";
    protected override string ServerTarget => "TcpTestServer3";
    protected override FrameFormat Format => FrameFormat.Tagged;
    protected override ClientModel CreateModel() => new PipelinedClientModel(MaxInFlight);
    protected override bool Resumes => true;
}

/// <summary>TCP 4 (TcpClientMultiThreadTest4): TCP 2's model on System.IO.Pipelines.</summary>
public sealed class TcpClientMultiThreadTest4 : TcpClientTask
{
    protected override string TransportName => "TcpClientMultiThreadTest4";
    protected override string ServerTarget => "TcpTestServer4";
    protected override StreamIo Io => StreamIo.Pipelines;
    protected override ClientModel CreateModel() => new PipelinedClientModel(MaxInFlight);
    protected override bool Resumes => true;
}
