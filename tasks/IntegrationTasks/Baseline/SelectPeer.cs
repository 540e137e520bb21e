using IntegrationTasks.Data;
using TaskItem = Microsoft.Build.Utilities.TaskItem;

namespace IntegrationTasks.Baseline;

/// <summary>
/// Adds the peer for this pair of databases to RunAll's runs (named by <see cref="Data.PeerCopies.NameFor"/>, run by the
/// PeerCopy target), or reports why there is none.
/// </summary>
public sealed class SelectPeer : IntegrationTask
{
    public string ServerProvider { get; set; } = "Sqlite";
    public string ClientProvider { get; set; } = "Sqlite";

    [Required] public string[] RecordCounts { get; set; } = [];

    /// <summary>The peer as a RunAll run (metadata ClientTarget, ServerTarget, ServerPort, RecordCounts), or nothing.</summary>
    [Output] public ITaskItem[] Peer { get; private set; } = [];

    /// <summary>Why no peer runs (metadata as NotRunTransport), or nothing.</summary>
    [Output] public ITaskItem[] NotRun { get; private set; } = [];

    protected override Task ExecuteAsync(CancellationToken cancellationToken)
    {
        var (server, client) = (DatabaseProviders.Parse(ServerProvider), DatabaseProviders.Parse(ClientProvider));
        if (Data.PeerCopies.NameFor(server, client) is { } name)
        {
            var item = new TaskItem(name);
            item.SetMetadata("ClientTarget", "PeerCopy");
            item.SetMetadata("ServerTarget", "");
            item.SetMetadata("ServerPort", "0");
            item.SetMetadata("OneClient", "true"); // the database's own tool: once per record count, whatever the client counts
            item.SetMetadata("Peer", "true"); // not a TransportDefinition: RunAll passes its targets itself
            item.SetMetadata("RecordCounts", string.Join('+', Counts.Parse(RecordCounts, "RecordCounts")));
            Peer = [item];
        }
        else
        {
            var entry = new TaskItem($"Peer ({server} → {client})");
            entry.SetMetadata("Reason", server == client
                ? $"No bulk path of {server}'s own is built into the suite (SQLite ATTACH and PostgreSQL COPY are)."
                : "A peer moves rows with one database's own tools; the two sides use different providers.");
            entry.SetMetadata("Fix", "");
            entry.SetMetadata("SeriesSeconds", "");
            entry.SetMetadata("Replacement", "");
            NotRun = [entry];
        }
        return Task.CompletedTask;
    }
}
