using IntegrationTasks.Transfer;

namespace IntegrationTasks.Results;

/// <summary>
/// Runs of several client machines against one server (each started with the same StartAt and its own ClientMachine), merged
/// into the one run they were together: clients and records added, the time the last machine took, bytes and CPU added, and
/// the batch-latency histograms added exactly (HdrHistogram), so the percentiles are those of every batch of every machine.
/// </summary>
public static class ClientMachineRuns
{
    public static List<Measurement> Merge(IEnumerable<Measurement> measurements)
    {
        var list = measurements.ToList();
        var single = list.Where(m => m.ClientMachine is null || m.StartAt is null);
        var merged = list.Where(m => m.ClientMachine is not null && m.StartAt is not null)
            .GroupBy(m => (m.Transport, m.StartAt, m.Repetition, m.BatchSize, m.Rate, m.Provider))
            .Select(Together);
        return [.. single, .. merged];
    }

    private static Measurement Together(IEnumerable<Measurement> group)
    {
        var runs = group.ToList();
        var machines = runs.Select(m => m.ClientMachine).Distinct().Count();
        if (machines != runs.Count)
            throw new IntegrationException(ErrorCodes.ResultsUnreadable,
                $"{runs[0].Transport} at {runs[0].StartAt:O}, repetition {runs[0].Repetition}: {runs.Count} runs from {machines} client machines; each machine's results may be named once.");
        if (runs.Count == 1)
            return runs[0];
        return runs[0] with
        {
            ClientMachine = null,
            ClientMachines = runs.Count,
            Clients = runs.Sum(m => m.Clients),
            Records = runs.Sum(m => m.Records),
            // They started together: the run lasted until the last machine's last commit.
            ElapsedSeconds = runs.Max(m => m.ElapsedSeconds),
            FirstCommitSeconds = runs.Min(m => m.FirstCommitSeconds),
            BytesSent = runs.Sum(m => m.BytesSent),
            BytesReceived = runs.Sum(m => m.BytesReceived),
            BytesNotMeasured = runs.Any(m => m.BytesNotMeasured == true) ? true : null,
            ClientCpuSeconds = runs.Sum(m => m.ClientCpuSeconds),
            ClientLockWaitSeconds = runs.Any(m => m.ClientLockWaitSeconds is not null) ? runs.Sum(m => m.ClientLockWaitSeconds ?? 0) : null,
            ClientAllocatedBytes = runs.Sum(m => m.ClientAllocatedBytes),
            ClientPeakBytes = runs.Max(m => m.ClientPeakBytes),
            BatchLatency = LatencySummary.Merge(runs.Select(m => m.BatchLatency)),
            ReplyLatency = LatencySummary.Merge(runs.Select(m => m.ReplyLatency)),
            Verified = runs.All(m => m.Verified),
            Reconnects = runs.Any(m => m.Reconnects is not null) ? runs.Sum(m => m.Reconnects ?? 0) : null,
        };
    }
}
