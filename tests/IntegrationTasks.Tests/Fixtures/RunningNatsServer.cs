namespace IntegrationTasks.Tests;

/// <summary>A NATS server (core or JetStream) running in the test process.</summary>
internal sealed class RunningNatsServer : IAsyncDisposable
{
    private readonly CancellationTokenSource _stop = new();
    private Task _serving = Task.CompletedTask;

    public CapturingLog Log { get; } = new();

    public static async Task<RunningNatsServer> StartAsync(Database database, bool jetStream, string? url = null, int maxMessageBytes = NatsDefaults.NatsMaxPayloadBytes)
    {
        var running = new RunningNatsServer();
        var source = new RecordSource(database, ServerWork.PerRecord);
        url ??= TestNats.Url;
        var serve = jetStream
            ? await new JetStreamServer(source, url, running.Log) { MaxMessageBytes = maxMessageBytes }.StartAsync(CancellationToken.None)
            : await new NatsCoreServer(source, url, NatsCoreServer.Subject, running.Log) { MaxMessageBytes = maxMessageBytes }.StartAsync(CancellationToken.None);
        running._serving = serve(running._stop.Token);
        return running;
    }

    public async ValueTask DisposeAsync()
    {
        await _stop.CancelAsync();
        await _serving.WaitAsync(TimeSpan.FromSeconds(30));
    }
}
