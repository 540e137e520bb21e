namespace IntegrationTasks.Results;

/// <summary>The runs every transport is measured against, by name: the series' baseline and the no-transport limits.</summary>
public static class References
{
    public const string Baseline = "DirectCopy";

    /// <summary>The limit with no transport: the same work, pipelined on both cores. Overheads are measured against it.</summary>
    public const string Pipelined = "PipelinedCopy";

    /// <summary>
    /// PipelinedCopy reading ranges (ServerWork=Range) in a run whose ServerWork is PerRecord: the limit for the transports whose
    /// server reads ranges whatever ServerWork says (FileTransferRequest), so that their ratios compare the same database work.
    /// </summary>
    public const string PipelinedRange = "PipelinedCopyRange";
}
