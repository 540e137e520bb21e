using IntegrationTasks.Data;
using IntegrationTasks.Transfer;

namespace IntegrationTasks.Baseline;

/// <summary>
/// A peer run: the rows moved with the databases' own bulk paths (<see cref="Data.PeerCopies"/>), timed and verified like a
/// transport's, so the report shows what an integration layer costs over moving the rows directly.
/// </summary>
public sealed class PeerCopy : InProcessCopy
{
    /// <summary>One set-based copy of the whole table: it has no share to split among clients.</summary>
    protected override bool ServesManyClients => false;

    protected override string TransportName =>
        Data.PeerCopies.NameFor(DatabaseProviders.Parse(ServerProvider), DatabaseProviders.Parse(ClientProvider)) ?? "Peer: none";

    protected override async Task<TransferResult> TransferAsync(BatchPlan plan, BatchImporter importer, CancellationToken cancellationToken)
    {
        var server = ServerDatabase();
        importer.MarkSetupDone();
        var copied = await Data.PeerCopies.CopyAsync(server, ClientDatabase!, plan.FirstId(0), plan.Records, cancellationToken).ConfigureAwait(false);
        importer.MarkCommitted(copied);
        return TransferResult.BytesNotMeasured;
    }
}
