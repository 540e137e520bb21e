using IntegrationTasks.Data;
using IntegrationTasks.Wire;

namespace IntegrationTasks.Transfer;

/// <summary>The client side of every XML transport: a response message in, one committed transaction out.</summary>
public sealed class BatchImporter : IAsyncDisposable
{
    private readonly RecordWriter _writer;
    private long _records;

    private BatchImporter(RecordWriter writer) => _writer = writer;

    public static async Task<BatchImporter> OpenAsync(Database database, CancellationToken cancellationToken) =>
        new(await RecordWriter.OpenAsync(database, RecordTable.Client, cancellationToken).ConfigureAwait(false));

    public long RecordsImported => Interlocked.Read(ref _records);

    /// <summary>Time the first batch committed, from the start of the transfer; null before.</summary>
    public TimeSpan? FirstCommitAfter { get; private set; }

    internal System.Diagnostics.Stopwatch? Clock { get; set; }

    public Task<int> ImportAsync(Stream response, CancellationToken cancellationToken) =>
        ImportAsync(RecordXml.ReadResponse(response), cancellationToken);

    public async Task<int> ImportAsync(IReadOnlyList<ServiceRecord> records, CancellationToken cancellationToken)
    {
        await _writer.InsertBatchAsync(records, cancellationToken).ConfigureAwait(false);
        FirstCommitAfter ??= Clock?.Elapsed;
        Interlocked.Add(ref _records, records.Count);
        return records.Count;
    }

    public ValueTask DisposeAsync() => _writer.DisposeAsync();
}
