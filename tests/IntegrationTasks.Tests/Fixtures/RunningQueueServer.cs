namespace IntegrationTasks.Tests;

/// <summary>A RabbitMQServer consumer running in the test process.</summary>
internal sealed class RunningQueueServer : IAsyncDisposable
{
    private readonly CancellationTokenSource _stop = new();
    private Task _serving = Task.CompletedTask;

    public CapturingLog Log { get; } = new();
    public QueueServer Server { get; private set; } = null!;

    public static async Task<RunningQueueServer> StartAsync(Database database, QueueTopology topology, int maxMessageBytes = 1 << 20)
    {
        var running = new RunningQueueServer();
        running.Server = new QueueServer(new RecordSource(database, ServerWork.PerRecord), TestBroker.Broker, topology, running.Log) { MaxMessageBytes = maxMessageBytes };
        var serve = await running.Server.StartAsync(CancellationToken.None);
        running._serving = serve(running._stop.Token);
        return running;
    }

    public async ValueTask DisposeAsync()
    {
        await _stop.CancelAsync();
        await _serving.WaitAsync(TimeSpan.FromSeconds(30));
    }
}
