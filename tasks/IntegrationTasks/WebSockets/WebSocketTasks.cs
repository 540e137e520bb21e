using System.Globalization;
using IntegrationTasks.Streams;
using IntegrationTasks.Transfer;

namespace IntegrationTasks.WebSockets;

/// <summary>
/// The WebSocket server: the host process's "websocket" module (tasks/IntegrationTasks.Host/WebSockets), Kestrel's WebSockets at
/// /records/ws, each connection worked by the stream server with TcpServer2's model. Not in the 2014 series.
/// </summary>
public sealed class WebSocketServer : HostModuleServerTask
{
    public int MaxFrameBytes { get; set; } = SettingDefaults.MaxFrameBytes;

    /// <summary>The most records one request may ask for; a larger request closes the WebSocket with 1009 and IT2005.</summary>
    public int MaxBatchRecords { get; set; } = SettingDefaults.MaxBatchRecords;

    /// <summary>Requests read ahead per connection before the WebSocket stops being read (back-pressure).</summary>
    public int MaxPendingRequests { get; set; } = 8;

    public int KeepAliveSeconds { get; set; } = WebSocketProtocol.DefaultKeepAliveSeconds;

    protected override string Module => "websocket";

    protected override IEnumerable<string> ModuleArguments() =>
    [
        "--max-frame-bytes", MaxFrameBytes.ToString(CultureInfo.InvariantCulture), "--max-batch-records", MaxBatchRecords.ToString(CultureInfo.InvariantCulture),
        "--max-pending-requests", MaxPendingRequests.ToString(CultureInfo.InvariantCulture), "--keep-alive-seconds", KeepAliveSeconds.ToString(CultureInfo.InvariantCulture),
    ];
}

/// <summary>
/// The WebSocket client: one WebSocket per transfer, batch requests pipelined up to MaxInFlight ahead and replies read in order as
/// they stream back (TcpClient2's model over WebSocket messages), imported one transaction per batch; a broken WebSocket is resumed.
/// </summary>
public sealed class WebSocketClient : StreamClientTask
{
    [Required] public string Uri { get; set; } = "ws://127.0.0.1:8086" + WebSocketProtocol.Path;

    public int KeepAliveSeconds { get; set; } = WebSocketProtocol.DefaultKeepAliveSeconds;

    /// <summary>Over wss://: the server's certificate must come from the authority in TlsFolder and name the Uri's host.</summary>
    public bool Tls { get; set; }

    /// <summary>Where the authority's certificate is (the server's TlsFolder).</summary>
    public string TlsFolder { get; set; } = "";

    /// <summary>Mutual TLS: present the client certificate in TlsFolder (the server then takes only clients of its authority).</summary>
    public bool ClientCertificates { get; set; }

    /// <summary>The file holding the web service's bearer token (the server's TokenFile), sent with the upgrade; empty: send none.</summary>
    public string TokenFile { get; set; } = "";

    protected override string TransportName => "WebSocketClient";
    protected override string ServerTarget => "WebSocketServer";
    protected override ClientModel CreateModel() => new PipelinedClientModel(MaxInFlight);
    protected override bool Resumes => true;

    protected override IStreamConnector CreateConnector()
    {
        var scheme = Tls ? "wss" : "ws";
        if (!System.Uri.TryCreate(Uri, UriKind.Absolute, out var uri) || uri.Scheme != scheme)
            throw new IntegrationException(ErrorCodes.InvalidParameter, $"Uri '{Uri}' is not a {scheme}:// URL{(Tls ? " (Tls=true)" : "")}.");
        if (KeepAliveSeconds < 1)
            throw new IntegrationException(ErrorCodes.InvalidParameter, $"KeepAliveSeconds must be at least 1 (was {KeepAliveSeconds}).");
        return new WebSocketConnector(uri, TimeSpan.FromSeconds(KeepAliveSeconds), Hosting.ServiceToken.Load(TokenFile),
            Tls ? TlsConnector.TrustingFolder(TlsFolder, uri.Host, ClientCertificates) : null, Hosting.TlsCertificates.HandshakeTimeout(TimeoutSeconds));
    }
}
