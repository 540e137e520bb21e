using IntegrationTasks.Wcf.NetTcp;

namespace IntegrationTasks.Tests;

/// <summary>The net.tcp endpoint of our own, with the real service, running in the test process on a free port.</summary>
internal sealed class RunningNetTcpServer : IAsyncDisposable
{
    private readonly CancellationTokenSource _stop = new();
    private IntegrationTestsService _service = null!;
    private Task _serving = Task.CompletedTask;

    public CapturingLog Log { get; } = new();
    public NetTcpServiceHost Host { get; private set; } = null!;
    public int Port { get; private set; }
    public string Address => $"net.tcp://127.0.0.1:{Port}{ServiceNames.NetTcpPath}";

    /// <summary>By a name its certificate holds as a DNS name (WCF checks the endpoint's DNS identity against those).</summary>
    public string LocalhostAddress => $"net.tcp://localhost:{Port}{ServiceNames.NetTcpPath}";

    public static async Task<RunningNetTcpServer> StartAsync(Database database, int maxBatchRecords = 100_000, int maxMessageBytes = 64 << 20,
        TimeSpan? connectionTimeout = null, int maxConnections = 100, System.Net.Security.SslServerAuthenticationOptions? tls = null)
    {
        var server = new RunningNetTcpServer();
        server._service = await IntegrationTestsService.OpenAsync(new RecordSource(database, ServerWork.PerRecord), 4, 2, maxBatchRecords, CancellationToken.None);
        server.Host = new NetTcpServiceHost(server._service, new NetTcpOptions
        {
            Port = 0, MaxMessageBytes = maxMessageBytes, ConnectionTimeout = connectionTimeout ?? TimeSpan.FromSeconds(120), MaxConnections = maxConnections,
            Tls = tls,
        }, server.Log);
        server.Port = server.Host.Start().Port;
        server._serving = server.Host.RunAsync(server._stop.Token);
        return server;
    }

    public async ValueTask DisposeAsync()
    {
        await _stop.CancelAsync();
        await _serving.WaitAsync(TimeSpan.FromSeconds(30));
        await _service.DisposeAsync();
        ServerLogs.AssertEveryProblemCoded(string.Join("\n", Log.Lines), "the net.tcp server");
    }
}
