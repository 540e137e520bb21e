using IntegrationTasks.Data;
using IntegrationTasks.Transfer;
using Microsoft.Build.Framework;

namespace IntegrationTasks.Baseline;

/// <summary>
/// The baseline every transport is compared with: the same per-record lookup on the server's
/// database and the same per-batch insert on the client's, in one process, with no transport.
/// </summary>
public sealed class DirectCopy : TransferClientTask
{
    public string ServerProvider { get; set; } = "Sqlite";

    [Required]
    public string ServerConnString { get; set; } = "";

    protected override string TransportName => "DirectCopy";

    protected override async Task<TransferResult> TransferAsync(BatchPlan plan, BatchImporter importer, CancellationToken cancellationToken)
    {
        var server = Database.Create(ServerProvider, ServerConnString);
        await using var lookup = await RecordLookup.OpenAsync(server, cancellationToken).ConfigureAwait(false);
        importer.MarkSetupDone();
        var batch = new List<ServiceRecord>(plan.BatchSize);
        for (var index = 0; index < plan.TotalBatches; index++)
        {
            batch.Clear();
            foreach (var id in plan.Ids(index))
            {
                if (await lookup.FindAsync(id, cancellationToken).ConfigureAwait(false) is { } record)
                    batch.Add(record);
            }
            await importer.ImportAsync(batch, cancellationToken).ConfigureAwait(false);
        }
        return new TransferResult(0, 0);
    }
}
