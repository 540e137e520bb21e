using IntegrationTasks.Streams;

namespace IntegrationTasks.Tests;

/// <summary>A TCP generation's server running in the test process on a free loopback port (or a Unix socket).</summary>
internal sealed class RunningTcpServer : IAsyncDisposable
{
    private readonly CancellationTokenSource _stop = new();
    private readonly StreamServerHost _server;
    private readonly Task _serving;

    /// <param name="socketPath">Serve on a Unix domain socket at this path instead of a loopback TCP port.</param>
    public RunningTcpServer(Database database, TcpGeneration? generation = null, int maxFrameBytes = SettingDefaults.MaxFrameBytes,
        TimeSpan? connectionTimeout = null, int maxBatchRecords = 100_000, int maxConnections = 100, string? socketPath = null,
        System.Net.Security.SslServerAuthenticationOptions? tls = null)
    {
        generation ??= TcpGeneration.All["TcpClient2"];
        IStreamListener listener = socketPath is null ? new TcpStreamListener("127.0.0.1", 0) : new UnixStreamListener(socketPath);
        Port = (listener as TcpStreamListener)?.LocalEndPoint.Port ?? 0;
        _server = new StreamServerHost(new RecordSource(database, ServerWork.PerRecord), listener,
            new StreamServerOptions
            {
                MaxFrameBytes = maxFrameBytes, Format = generation.Format, Io = generation.Io,
                ConnectionTimeout = connectionTimeout ?? TimeSpan.FromSeconds(120), MaxBatchRecords = maxBatchRecords, MaxConnections = maxConnections,
                Tls = tls,
            },
            generation.ServerModel(), Log);
        _serving = _server.RunAsync(_stop.Token);
    }

    public CapturingLog Log { get; } = new();
    public int Port { get; }
    public StreamServerHost Server => _server;

    public async ValueTask DisposeAsync()
    {
        await _stop.CancelAsync();
        await _serving.WaitAsync(TimeSpan.FromSeconds(30));
        await _server.DisposeAsync();
        _stop.Dispose();
        // Whatever the test's clients did to it, the server told each problem with its code.
        ServerLogs.AssertEveryProblemCoded(string.Join("\n", Log.Lines), "the TCP server");
    }
}
