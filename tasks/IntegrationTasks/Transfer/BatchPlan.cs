using IntegrationTasks.Common;
using IntegrationTasks.Data;

namespace IntegrationTasks.Transfer;

/// <summary>The series' batches: contiguous inclusive ID ranges of BatchSize, starting at 1.</summary>
public sealed record BatchPlan(int TotalBatches, int BatchSize)
{
    public int Records => TotalBatches * BatchSize;

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

    public int FirstId(int batchIndex) => batchIndex * BatchSize + 1;

    /// <summary>The batch a record's ID belongs to (0-based).</summary>
    public int BatchOf(int id) => (id - 1) / BatchSize;

    public IReadOnlyList<int> Ids(int batchIndex) => new ConsecutiveIds(FirstId(batchIndex), BatchSize);
}
