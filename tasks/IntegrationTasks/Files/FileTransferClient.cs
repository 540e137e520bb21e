using System.Text.RegularExpressions;
using IntegrationTasks.Common;
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

    public async Task<TransferResult> RunAsync(BatchPlan plan, BatchImporter importer, CancellationToken cancellationToken)
    {
        FileExchange.EnsureDirectory(serverInbox, "OutputDir");
        FileExchange.EnsureDirectory(clientInbox, "InputDir");
        var id = FileExchange.NewId();
        var response = Path.Combine(clientInbox, id + FileExchange.ResponseSuffix);
        var error = Path.Combine(clientInbox, id + FileExchange.ErrorSuffix);
        using var signal = new DirectorySignal(clientInbox); // before publishing, so the answer cannot be missed
        importer.MarkSetupDone();

        var sent = listIds
            ? await FileExchange.PublishAsync(serverInbox, id + FileExchange.RequestSuffix,
                stream => { RecordXml.WriteRequest(stream, Enumerable.Range(1, plan.Records)); return Task.CompletedTask; },
                cancellationToken).ConfigureAwait(false)
            : await FileExchange.PublishAsync(serverInbox, id + FileExchange.ExtractSuffix,
                stream => { ExtractRequest.Write(stream, 1, plan.Records); return Task.CompletedTask; },
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
        var received = new FileInfo(response).Length;
        await using (var stream = FileExchange.OpenRead(response))
            await importer.ImportStreamAsync(stream, plan.BatchSize, cancellationToken).ConfigureAwait(false);
        File.Delete(response);
        return new TransferResult(sent, received);
    }
}
