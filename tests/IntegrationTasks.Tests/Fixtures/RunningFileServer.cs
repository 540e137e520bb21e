using IntegrationTasks.Files;

namespace IntegrationTasks.Tests;

/// <summary>A FileTransferTestServer running in the test process on two fresh inboxes.</summary>
internal sealed class RunningFileServer : IAsyncDisposable
{
    private readonly CancellationTokenSource _stop = new();
    private readonly FileTransferServer _server;
    private readonly Task _serving;

    private readonly TempDirectory _root = new("it-files-");

    public RunningFileServer(Database database)
    {
        ServerInbox = Path.Combine(_root, "server-inbox");
        ClientInbox = Path.Combine(_root, "client-inbox");
        _server = new FileTransferServer(new RecordSource(database, ServerWork.PerRecord), ServerInbox, ClientInbox, Log);
        _server.Start();
        _serving = _server.RunAsync(_stop.Token);
    }

    public CapturingLog Log { get; } = new();
    public string ServerInbox { get; }
    public string ClientInbox { get; }
    public FileTransferServer Server => _server;

    public async ValueTask DisposeAsync()
    {
        await _stop.CancelAsync();
        await _serving.WaitAsync(TimeSpan.FromSeconds(30));
        _server.Dispose();
        _root.Dispose();
    }
}
