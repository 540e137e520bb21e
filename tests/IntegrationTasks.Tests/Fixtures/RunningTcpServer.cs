using IntegrationTasks.Data;
using IntegrationTasks.Tcp;
using IntegrationTasks.Wire;

namespace IntegrationTasks.Tests;

/// <summary>A TcpServer2 running in the test process on a free loopback port.</summary>
internal sealed class RunningTcpServer : IAsyncDisposable
{
    private readonly CancellationTokenSource _stop = new();
    private readonly TcpServerHost _server;
    private readonly Task _serving;

    public RunningTcpServer(Database database, TcpGeneration? generation = null, int maxFrameBytes = FrameCodec.DefaultMaxFrameBytes,
        TimeSpan? connectionTimeout = null, int maxBatchRecords = 100_000, int maxConnections = 100)
    {
        generation ??= TcpGeneration.All["TcpClient2"];
        _server = new TcpServerHost(new RecordSource(database, ServerWork.PerRecord),
            new TcpServerOptions
            {
                Port = 0, MaxFrameBytes = maxFrameBytes, Format = generation.Format, Io = generation.Io,
                ConnectionTimeout = connectionTimeout ?? TimeSpan.FromSeconds(120), MaxBatchRecords = maxBatchRecords, MaxConnections = maxConnections,
            },
            generation.ServerModel(), Log);
        Port = _server.Start().Port;
        _serving = _server.RunAsync(_stop.Token);
    }

    public CapturingLog Log { get; } = new();
    public int Port { get; }
    public TcpServerHost Server => _server;

    public async ValueTask DisposeAsync()
    {
        await _stop.CancelAsync();
        await _serving.WaitAsync(TimeSpan.FromSeconds(30));
        await _server.DisposeAsync();
        _stop.Dispose();
    }
}
