namespace IntegrationTasks.Tests;

/// <summary>A Redis Streams server running in the test process.</summary>
internal sealed class RunningRedisServer : IAsyncDisposable
{
    private readonly CancellationTokenSource _stop = new();
    private Task _serving = Task.CompletedTask;

    public CapturingLog Log { get; } = new();

    public static async Task<RunningRedisServer> StartAsync(Database database, string? endpoint = null, int maxMessageBytes = 1 << 24)
    {
        var running = new RunningRedisServer();
        var server = new RedisStreamResponder(new RecordSource(database, ServerWork.PerRecord), endpoint ?? TestRedis.Endpoint, running.Log)
        {
            MaxMessageBytes = maxMessageBytes,
        };
        var serve = await server.StartAsync(CancellationToken.None);
        running._serving = serve(running._stop.Token);
        return running;
    }

    public async ValueTask DisposeAsync()
    {
        await _stop.CancelAsync();
        await _serving.WaitAsync(TimeSpan.FromSeconds(30));
    }
}
