using IntegrationTasks.Data;

namespace IntegrationTasks.Transfer;

/// <summary>
/// The series' batches: contiguous inclusive ID ranges of BatchSize, starting at 1 — or, for one of several clients, at the
/// batch <see cref="FirstBatch"/> of the whole plan (its batch 0 is the whole plan's batch FirstBatch).
/// </summary>
public sealed record BatchPlan(int TotalBatches, int BatchSize)
{
    public int Records => TotalBatches * BatchSize;

    /// <summary>Where this plan's batches start in the whole plan (0 but for one client's slice).</summary>
    public int FirstBatch { get; init; }

    /// <summary>Client <paramref name="client"/>'s share of <paramref name="clients"/>: contiguous batches, the first clients one more when they do not divide.</summary>
    public BatchPlan Slice(int client, int clients)
    {
        var each = TotalBatches / clients;
        var extra = TotalBatches % clients;
        return new BatchPlan(each + (client < extra ? 1 : 0), BatchSize) { FirstBatch = FirstBatch + client * each + Math.Min(client, extra) };
    }

    public static BatchPlan Create(int totalBatches, int batchSize)
    {
        if (totalBatches < 1)
            throw new IntegrationException(ErrorCodes.InvalidParameter, $"TotalBatches must be at least 1 (was {totalBatches}).");
        if (batchSize < 1)
            throw new IntegrationException(ErrorCodes.InvalidParameter, $"BatchSize must be at least 1 (was {batchSize}).");
        if ((long)totalBatches * batchSize > int.MaxValue)
            throw new IntegrationException(ErrorCodes.InvalidParameter,
                $"TotalBatches × BatchSize ({(long)totalBatches * batchSize:N0}) exceeds the ID range.");
        return new BatchPlan(totalBatches, batchSize);
    }

    public int FirstId(int batchIndex) => (FirstBatch + batchIndex) * BatchSize + 1;

    /// <summary>The batch a record's ID belongs to (0-based).</summary>
    public int BatchOf(int id) => (id - 1) / BatchSize - FirstBatch;

    public IReadOnlyList<int> Ids(int batchIndex) => new ConsecutiveIds(FirstId(batchIndex), BatchSize);
}
