using IntegrationTasks.Common;
using IntegrationTasks.Data;
using IntegrationTasks.Streams;
using IntegrationTasks.WebSockets;

namespace IntegrationTasks.Host.WebSockets;

/// <summary>
/// The WebSocket server on Kestrel: a WebSocket to /records/ws is one transfer, its binary messages carrying the suite's frames,
/// worked by the stream server with TcpServer2's model (receive, answer in order, send, as separate loops). Kestrel pings each
/// connection every --keep-alive-seconds and drops one whose pong does not come within as long. Arguments: --provider, --connstring,
/// --server-work, --max-frame-bytes, --max-batch-records, --max-pending-requests, --keep-alive-seconds (and the host's
/// --connection-timeout-seconds, --max-connections).
/// </summary>
[HostModule("websocket")]
internal sealed class WebSocketModule(HostArguments arguments) : IHostModule
{
    private RecordSource _source = null!;
    private StreamConnectionServer _server = null!;
    private TimeSpan _keepAlive;

    public string Describe() => $"{WebSocketProtocol.Path}, {_source.Work}, {_source.Database.Describe()}";

    public async Task ConfigureAsync(WebApplicationBuilder builder, CancellationToken cancellationToken)
    {
        var options = new StreamServerOptions
        {
            MaxFrameBytes = (int)arguments.Number("--max-frame-bytes", SettingDefaults.MaxFrameBytes),
            MaxBatchRecords = (int)arguments.Number("--max-batch-records", SettingDefaults.MaxBatchRecords),
            ConnectionTimeout = TimeSpan.FromSeconds(arguments.Number("--connection-timeout-seconds", SettingDefaults.ConnectionTimeoutSeconds)),
        };
        var pending = (int)arguments.Number("--max-pending-requests", 8);
        _keepAlive = TimeSpan.FromSeconds(arguments.Number("--keep-alive-seconds", WebSocketProtocol.DefaultKeepAliveSeconds));
        if (options.MaxFrameBytes < 1 || options.MaxBatchRecords < 1 || pending < 1 || _keepAlive < TimeSpan.FromSeconds(1))
            throw new IntegrationException(ErrorCodes.InvalidParameter,
                $"MaxFrameBytes ({options.MaxFrameBytes}), MaxBatchRecords ({options.MaxBatchRecords}), MaxPendingRequests ({pending}) and KeepAliveSeconds ({_keepAlive.TotalSeconds}) must be at least 1.");
        _source = await arguments.OpenRecordSourceAsync(cancellationToken);
        _server = new StreamConnectionServer(_source, options, new PipelinedServerModel(answerers: 1, pending), new ConsoleEventLog());
    }

    public void Map(WebApplication app)
    {
        app.UseWebSockets(new WebSocketOptions { KeepAliveInterval = _keepAlive, KeepAliveTimeout = _keepAlive });
        app.Map(WebSocketProtocol.Path, async (HttpContext context) =>
        {
            if (!context.WebSockets.IsWebSocketRequest)
            {
                context.Response.StatusCode = StatusCodes.Status400BadRequest;
                await context.Response.WriteAsync(CodedError.Format(ErrorCodes.RequestRefused,
                    $"{WebSocketProtocol.Path} is a WebSocket endpoint: open a WebSocket (ws://) to it.\n"), context.RequestAborted);
                return;
            }
            StallGuard.LeaveToProtocol(context);
            using var socket = await context.WebSockets.AcceptWebSocketAsync();
            await using var connection = WebSocketConnections.Of(socket, $"{context.Connection.RemoteIpAddress}:{context.Connection.RemotePort}");
            await _server.ServeAsync(connection, app.Lifetime.ApplicationStopping);
        });
    }

    /// <summary>The stream server's lines as the host prints its own: one per client served, warnings coded as the server task reads them.</summary>
    private sealed class ConsoleEventLog : IEventLog
    {
        private const string Category = "IntegrationTasks.Host.WebSockets";

        public void Info(string message) => Console.WriteLine(message);

        public void Detail(string message)
        {
        }

        public void Warning(string code, string message) => Console.WriteLine($"warn: {Category}[0] {CodedError.Format(code, message)}");

        public void Error(string code, string message) => Console.WriteLine($"fail: {Category}[0] {CodedError.Format(code, message)}");
    }
}
