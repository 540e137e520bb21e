using IntegrationTasks.Data;
using IntegrationTasks.Transfer;
using IntegrationTasks.Wire;

namespace IntegrationTasks.Tcp;

/// <summary>The series' TcpTestServer2 as an MSBuild task: serves until cancelled (Ctrl+C) or stopped by the suite.</summary>
public sealed class TcpServer2 : TransferServerTask
{
    public int Port { get; set; } = 8081;

    /// <summary>Loopback by default; 0.0.0.0 to serve other machines.</summary>
    public string BindAddress { get; set; } = "127.0.0.1";

    public int MaxFrameBytes { get; set; } = FrameCodec.DefaultMaxFrameBytes;

    public int MaxPendingRequests { get; set; } = 8;

    protected override Task<(string Endpoint, Func<CancellationToken, Task> Serve)> StartAsync(Database database, CancellationToken cancellationToken)
    {
        var options = new TcpServerOptions
        {
            BindAddress = BindAddress, Port = Port, MaxFrameBytes = MaxFrameBytes, MaxPendingRequests = MaxPendingRequests,
        };
        var server = new PipelinedTcpServer(database, options, EventLog);
        var endpoint = server.Start();
        Func<CancellationToken, Task> serve = async token =>
        {
            await using (server)
                await server.RunAsync(token).ConfigureAwait(false);
        };
        return Task.FromResult(($"tcp://{endpoint}", serve));
    }
}
