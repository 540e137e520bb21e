namespace IntegrationTasks.Data;

/// <summary>How the server reads a batch from its database.</summary>
public enum ServerWork
{
    /// <summary>One SELECT per ID: the series' scenario, kept on purpose (as in its Web Service (Async) part).</summary>
    PerRecord,

    /// <summary>One range query per batch, rows streamed as they come: what the series said would be far more efficient.</summary>
    Range,
}

public static class ServerWorks
{
    public static ServerWork Parse(string? name) =>
        (name ?? "").Trim().ToLowerInvariant() switch
        {
            "" or "perrecord" => ServerWork.PerRecord,
            "range" => ServerWork.Range,
            _ => throw new IntegrationException(ErrorCodes.InvalidParameter, $"Unknown ServerWork '{name}'. Use PerRecord or Range."),
        };
}

/// <summary>The server's side of a transfer: its database and how it reads batches from it.</summary>
public sealed record RecordSource(Database Database, ServerWork Work)
{
    public Task<RecordLookup> OpenLookupAsync(CancellationToken cancellationToken) => RecordLookup.OpenAsync(Database, Work, cancellationToken);
}
