using IntegrationTasks.Transfer;
using IntegrationTasks.Wire;

namespace IntegrationTasks.Files;

/// <summary>
/// The series' FileTransferRequest (ask for N records: one extraction) and FileTransferBigRequest
/// (send the list of IDs): publish the request file into the server's inbox, wait for the answer in
/// our own inbox (no polling: directory events), then import it in batches while reading it.
/// </summary>
public sealed partial class FileTransferClient(string serverInbox, string clientInbox, bool listIds)
{
    /// <summary>How long to wait for a server to serve the inbox before giving up (no request is left behind).</summary>
    public TimeSpan ServerWait { get; init; } = TimeSpan.FromSeconds(120);

    public IEventLog Log { get; init; } = NullEventLog.Instance;

    /// <summary>The name to give in the advice to start a server.</summary>
    public string TransportName { get; init; } = "FileTransferRequest";

    /// <param name="committed">Hears each batch as its transaction commits; every batch counts its wait from the request's publication.</param>
    public async Task<TransferResult> RunAsync(BatchPlan plan, BatchImporter importer, CommittedBatches committed, CancellationToken cancellationToken)
    {
        // One client's share of several starts where its slice does (IDs 1..N for the series' single client).
        var firstId = plan.FirstId(0);
        FileExchange.EnsureDirectory(serverInbox, "OutputDir");
        FileExchange.EnsureDirectory(clientInbox, "InputDir");
        var id = FileExchange.NewId();
        var response = Path.Combine(clientInbox, id + FileExchange.ResponseSuffix);
        var error = Path.Combine(clientInbox, id + FileExchange.ErrorSuffix);
        await WaitForServerAsync(cancellationToken).ConfigureAwait(false);
        using var signal = new DirectorySignal(clientInbox); // before publishing, so the answer cannot be missed
        importer.MarkSetupDone();

        for (var batch = 0; batch < plan.TotalBatches; batch++)
            committed.Latency.Sent(batch);
        var sent = listIds
            ? await FileExchange.PublishAsync(serverInbox, id + FileExchange.RequestSuffix,
                stream => { RecordXml.WriteRequest(stream, Enumerable.Range(firstId, plan.Records)); return Task.CompletedTask; },
                cancellationToken).ConfigureAwait(false)
            : await FileExchange.PublishAsync(serverInbox, id + FileExchange.ExtractSuffix,
                stream => { ExtractRequest.Write(stream, firstId, plan.Records); return Task.CompletedTask; },
                cancellationToken).ConfigureAwait(false);

        while (!File.Exists(response) && !File.Exists(error))
            await signal.WaitAsync(cancellationToken).ConfigureAwait(false);

        if (File.Exists(error))
        {
            var text = await File.ReadAllTextAsync(error, cancellationToken).ConfigureAwait(false);
            File.Delete(error);
            var coded = CodedError.TryParse(text, out var code, out var message);
            throw new IntegrationException(coded ? code : ErrorCodes.RequestRefused, $"The file server refused the request: {message}");
        }
        // The answer is published whole (written aside, then renamed): every batch of it arrived now.
        for (var batch = 0; batch < plan.TotalBatches; batch++)
            committed.Latency.Received(batch);
        var received = new FileInfo(response).Length;
        await using (var stream = FileExchange.OpenRead(response))
            await importer.ImportStreamAsync(stream, plan.BatchSize, cancellationToken, r => plan.BatchOf(r.Id), committed.Add).ConfigureAwait(false);
        File.Delete(response);
        return new TransferResult(sent, received);
    }

    /// <summary>
    /// A request is left only where a server serves (its marker, its process alive): otherwise the client would wait its whole
    /// timeout for nothing and leave a request that a later server answers into an orphan response.
    /// </summary>
    private async Task WaitForServerAsync(CancellationToken cancellationToken)
    {
        if (FileExchange.ServerIsServing(serverInbox))
            return;
        Log.Info($"{TransportName}: no FileTransferTestServer serves {serverInbox} yet; waiting up to {ServerWait.TotalSeconds:F0} s for one.");
        using var serverSignal = new DirectorySignal(serverInbox);
        using var wait = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        wait.CancelAfter(ServerWait);
        try
        {
            while (!FileExchange.ServerIsServing(serverInbox))
                await serverSignal.WaitAsync(wait.Token).ConfigureAwait(false);
        }
        catch (OperationCanceledException) when (!cancellationToken.IsCancellationRequested)
        {
            throw new IntegrationException(ErrorCodes.ConnectionFailed,
                $"No FileTransferTestServer serves {serverInbox} (waited {ServerWait.TotalSeconds:F0} s, ConnectionTimeoutSeconds); no request was left. " +
                "Start one with: dotnet msbuild build.proj -t:FileTransferTestServer");
        }
    }
}
