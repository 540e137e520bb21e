using IntegrationTasks.Data;
using IntegrationTasks.Transfer;

namespace IntegrationTasks.Files;

/// <summary>The series' FileTransferTestServer: answers request files until cancelled (Ctrl+C) or stopped by the suite.</summary>
public sealed class FileTransferTestServer : TransferServerTask
{
    /// <summary>The server's inbox, watched for request files.</summary>
    [Required] public string InputDir { get; set; } = "";

    /// <summary>Where responses go: the client's inbox (a shared mount when the client is on another machine).</summary>
    [Required] public string OutputDir { get; set; } = "";

    /// <summary>Request files waiting at once that it takes on (answered in turn); one more is answered at once with IT3008.</summary>
    public int MaxPendingRequests { get; set; } = 100;

    private FileTransferServer? _server;

    protected override long? RequestsWaiting => _server?.RequestsWaiting;

    protected override Task<(string Endpoint, Func<CancellationToken, Task> Serve)> StartAsync(RecordSource source, CancellationToken cancellationToken)
    {
        if (MaxPendingRequests < 1)
            throw new Common.IntegrationException(Common.ErrorCodes.InvalidParameter, $"MaxPendingRequests must be at least 1 (was {MaxPendingRequests}).");
        var server = _server = new FileTransferServer(source, Path.GetFullPath(InputDir), Path.GetFullPath(OutputDir), EventLog) { MaxPendingRequests = MaxPendingRequests };
        server.Start();
        Func<CancellationToken, Task> serve = async token =>
        {
            using (server)
                await server.RunAsync(token).ConfigureAwait(false);
        };
        return Task.FromResult(($"file://{Path.GetFullPath(InputDir)}", serve));
    }
}

/// <summary>A file transfer client: the series' OutputDir (the server's inbox) and InputDir (our own).</summary>
public abstract class FileTransferClientTask : TransferClientTask
{
    [Required] public string OutputDir { get; set; } = "";
    [Required] public string InputDir { get; set; } = "";

    /// <summary>How long to wait for a server to serve OutputDir before failing (IT3003) without leaving a request.</summary>
    public int ConnectionTimeoutSeconds { get; set; } = SettingDefaults.ConnectionTimeoutSeconds;

    protected abstract bool ListIds { get; }

    /// <summary>Each client its own request file and answer, in the one inbox pair (the series' server answers them in turn).</summary>
    protected override bool ServesManyClients => true;

    protected override Task<TransferResult> TransferAsync(BatchPlan plan, BatchImporter importer, CancellationToken cancellationToken) =>
        new FileTransferClient(Path.GetFullPath(OutputDir), Path.GetFullPath(InputDir), ListIds)
        {
            ServerWait = TimeSpan.FromSeconds(Math.Max(1, ConnectionTimeoutSeconds)), Log = EventLog, TransportName = TransportName,
        }.RunAsync(plan, importer, Resumption(plan, resumes: false).Committed, cancellationToken);
}

/// <summary>Simple extraction (FileTransferRequest): ask for IDs 1..N; the server answers with one range query.</summary>
public sealed class FileTransferRequest : FileTransferClientTask
{
    protected override string TransportName => "FileTransferRequest";
    protected override bool ListIds => false;
}

/// <summary>Request/response (FileTransferBigRequest): send the list of IDs; the server looks each one up.</summary>
public sealed class FileTransferBigRequest : FileTransferClientTask
{
    protected override string TransportName => "FileTransferBigRequest";
    protected override bool ListIds => true;
}
