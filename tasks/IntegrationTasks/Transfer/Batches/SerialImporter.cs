
namespace IntegrationTasks.Transfer;

/// <summary>One import at a time into the client's one connection, from whichever call, task or thread has its batch.</summary>
public sealed class SerialImporter(BatchImporter importer)
{
    private readonly SemaphoreSlim _gate = new(1, 1);

    public async Task ImportAsync(IReadOnlyList<ServiceRecord> batch, CancellationToken cancellationToken)
    {
        await _gate.WaitAsync(cancellationToken).ConfigureAwait(false);
        try
        {
            await importer.ImportAsync(batch, cancellationToken).ConfigureAwait(false);
        }
        finally
        {
            _gate.Release();
        }
    }
}
