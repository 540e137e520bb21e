using System.Threading.Channels;
using IntegrationTasks.Data;
using IntegrationTasks.Transfer;

namespace IntegrationTasks.Baseline;

/// <summary>
/// The limit beside DirectCopy: the same server reads and client inserts in one process, but the reads run on
/// <see cref="Answerers"/> connections at once (as many as the fastest transport's server uses) and one writer
/// imports, joined by a bounded queue of batches — as fast as this work can go with no transport at all. A
/// transport's time minus this one is what the transport itself costs.
/// </summary>
public sealed class PipelinedCopy : InProcessCopy
{
    /// <summary>Reading connections, each reading whole batches (the servers' Answerers setting).</summary>
    public int Answerers { get; set; } = SettingDefaults.Answerers;

    protected override string TransportName => "PipelinedCopy";

    protected override async Task<TransferResult> TransferAsync(BatchPlan plan, BatchImporter importer, CancellationToken cancellationToken)
    {
        if (Answerers < 1)
            throw new IntegrationException(ErrorCodes.InvalidParameter, $"Answerers must be at least 1 (was {Answerers}).");
        var source = ServerSource();
        var lookups = new List<RecordLookup>();
        try
        {
            for (var i = 0; i < Math.Min(Answerers, plan.TotalBatches); i++)
                lookups.Add(await source.OpenLookupAsync(cancellationToken).ConfigureAwait(false));
            importer.MarkSetupDone();
            await CopyAsync(plan, lookups, importer, MaxInFlight, cancellationToken).ConfigureAwait(false);
        }
        finally
        {
            foreach (var lookup in lookups)
                await lookup.DisposeAsync().ConfigureAwait(false);
        }
        return new TransferResult(0, 0);
    }

    /// <summary>Readers take the next batch until none is left; the one writer imports batches as they are queued (in any order).</summary>
    public static async Task CopyAsync(BatchPlan plan, IReadOnlyList<RecordLookup> lookups, BatchImporter importer, int maxQueued,
        CancellationToken cancellationToken)
    {
        // A reader holds a pool thread for as long as a synchronous (SQLite) read takes, and the writer needs one beside them. Met as
        // starvation, the pool adds threads only slowly, from however many it kept through the other transports' runs, so the same
        // work's time would depend on what ran before it.
        using var threads = ThreadPoolReservation.Reserve(lookups.Count + 1);
        using var cancellation = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        var token = cancellation.Token;
        var queue = Channel.CreateBounded<List<ServiceRecord>>(new BoundedChannelOptions(maxQueued) { SingleReader = true });
        var next = -1;

        async Task ReadAsync(RecordLookup lookup)
        {
            // Off the caller's thread: with SQLite a read is synchronous and would otherwise hold up the other readers.
            await Task.Yield();
            int index;
            while ((index = Interlocked.Increment(ref next)) < plan.TotalBatches)
            {
                var batch = new List<ServiceRecord>(plan.BatchSize);
                await foreach (var record in lookup.ReadAsync(plan.Ids(index), token).ConfigureAwait(false))
                    batch.Add(record);
                await queue.Writer.WriteAsync(batch, token).ConfigureAwait(false);
            }
        }

        async Task ReadAllAsync()
        {
            await TaskGroup.WhenAllOrFirstFailure(cancellation, [.. lookups.Select(ReadAsync)]).ConfigureAwait(false);
            queue.Writer.Complete();
        }

        async Task WriteAsync()
        {
            await foreach (var batch in queue.Reader.ReadAllAsync(token).ConfigureAwait(false))
                await importer.ImportAsync(batch, token).ConfigureAwait(false);
        }

        await TaskGroup.WhenAllOrFirstFailure(cancellation, ReadAllAsync(), WriteAsync()).ConfigureAwait(false);
    }
}
