using IntegrationTasks.Data;
using IntegrationTasks.Transfer;

namespace IntegrationTasks.Baseline;

/// <summary>
/// The series' baseline: the same server reads (<see cref="ServerWork"/>) and the same per-batch insert on the
/// client's database, one after the other in one process, with no transport.
/// </summary>
public sealed class DirectCopy : InProcessCopy
{
    protected override string TransportName => "DirectCopy";

    protected override async Task<TransferResult> TransferAsync(BatchPlan plan, BatchImporter importer, CancellationToken cancellationToken)
    {
        await using var lookup = await ServerSource().OpenLookupAsync(cancellationToken).ConfigureAwait(false);
        importer.MarkSetupDone();
        var batch = new List<ServiceRecord>(plan.BatchSize);
        for (var index = 0; index < plan.TotalBatches; index++)
        {
            batch.Clear();
            await foreach (var record in lookup.ReadAsync(plan.Ids(index), cancellationToken).ConfigureAwait(false))
                batch.Add(record);
            await importer.ImportAsync(batch, cancellationToken).ConfigureAwait(false);
        }
        return new TransferResult(0, 0);
    }
}
