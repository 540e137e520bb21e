using System.Threading.Channels;
using IntegrationTasks.Data;
using IntegrationTasks.Wire;

namespace IntegrationTasks.Transfer;

/// <summary>The client side of every XML transport: a response message in, one committed transaction out.</summary>
public sealed class BatchImporter : IAsyncDisposable
{
    private readonly RecordWriter _writer;
    private long _records;
    private long _lockWaitTicks;

    /// <summary>Time its transactions (and, for a run of several clients, theirs) waited to begin: the write lock on SQLite.</summary>
    public TimeSpan WriteLockWait => TimeSpan.FromTicks(Interlocked.Read(ref _lockWaitTicks));

    private BatchImporter(RecordWriter writer) => _writer = writer;

    public static async Task<BatchImporter> OpenAsync(Database database, CancellationToken cancellationToken, bool ignoreExisting = false) =>
        new(await RecordWriter.OpenAsync(database, RecordTable.Client, cancellationToken, ignoreExisting).ConfigureAwait(false));

    public long RecordsImported => Interlocked.Read(ref _records);

    /// <summary>Time the first batch committed, from the start of the transfer; null before.</summary>
    public TimeSpan? FirstCommitAfter { get; private set; }

    internal System.Diagnostics.Stopwatch? Clock { get; set; }

    /// <summary>Time spent setting up (connecting, declaring) before the transfer proper; marked by the transport.</summary>
    public TimeSpan? SetupTime { get; private set; }

    /// <summary>Called by a transport once it is connected and ready to send its first request.</summary>
    public void MarkSetupDone()
    {
        SetupTime ??= Clock?.Elapsed;
        Run?.MarkSetupDone();
    }

    /// <summary>Imports a response message already in memory as one batch.</summary>
    public Task<int> ImportAsync(Stream response, CancellationToken cancellationToken) =>
        ImportAsync(RecordXml.ReadResponse(response, cancellationToken), cancellationToken);

    /// <summary>
    /// Imports a response that is still arriving (a file, an HTTP body), one transaction per
    /// <paramref name="batchSize"/> records as they are parsed; the next batch is parsed while the one before
    /// it is inserted. Memory holds three batches at most, whatever the total. With <paramref name="batchOf"/>, a batch also
    /// ends where the records' batch changes, <paramref name="received"/> hears each batch once it is wholly parsed and
    /// <paramref name="committed"/> once its transaction committed.
    /// </summary>
    public async Task<long> ImportStreamAsync(Stream response, int batchSize, CancellationToken cancellationToken,
        Func<ServiceRecord, int>? batchOf = null, Action<int>? committed = null, Action<int>? received = null)
    {
        using var cancellation = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        var token = cancellation.Token;
        var parsed = Channel.CreateBounded<List<ServiceRecord>>(new BoundedChannelOptions(1) { SingleReader = true, SingleWriter = true });
        long total = 0;

        async Task ParseAsync()
        {
            using var reader = new RecordXml.ResponseReader(response);
            var batch = new List<ServiceRecord>(batchSize);
            while (await reader.ReadAsync(token).ConfigureAwait(false) is { } record)
            {
                if (batch.Count > 0 && batchOf is not null && batchOf(record) != batchOf(batch[0]))
                {
                    await HandOnAsync(batch).ConfigureAwait(false);
                    batch = new List<ServiceRecord>(batchSize);
                }
                batch.Add(record);
                if (batch.Count < batchSize)
                    continue;
                await HandOnAsync(batch).ConfigureAwait(false);
                batch = new List<ServiceRecord>(batchSize);
            }
            if (batch.Count > 0)
                await HandOnAsync(batch).ConfigureAwait(false);
            parsed.Writer.Complete();
        }

        ValueTask HandOnAsync(List<ServiceRecord> batch)
        {
            if (batchOf is not null)
                received?.Invoke(batchOf(batch[0]));
            return parsed.Writer.WriteAsync(batch, token);
        }

        async Task InsertAsync()
        {
            await foreach (var batch in parsed.Reader.ReadAllAsync(token).ConfigureAwait(false))
            {
                total += await ImportAsync(batch, token).ConfigureAwait(false);
                if (batchOf is not null)
                    committed?.Invoke(batchOf(batch[0]));
            }
        }

        await TaskGroup.WhenAllOrFirstFailure(cancellation, ParseAsync(), InsertAsync()).ConfigureAwait(false);
        return total;
    }

    public async Task<int> ImportAsync(IReadOnlyList<ServiceRecord> records, CancellationToken cancellationToken)
    {
        if (records.Count == 0)
            return 0;
        Waited(await _writer.InsertBatchAsync(records, cancellationToken).ConfigureAwait(false));
        Counted(records.Count);
        LargeRowCollection.Committed(records);
        return records.Count;
    }

    /// <summary>The run's importer, when this one is one client's of several: what it commits counts there too.</summary>
    internal BatchImporter? Run { get; init; }

    private void Waited(TimeSpan wait)
    {
        Interlocked.Add(ref _lockWaitTicks, wait.Ticks);
        Run?.Waited(wait);
    }

    private void Counted(long records)
    {
        FirstCommitAfter ??= Clock?.Elapsed;
        Interlocked.Add(ref _records, records);
        Run?.Counted(records);
    }

    /// <summary>Another importer on its own connection, counting into this one (one client of several).</summary>
    public static async Task<BatchImporter> OpenForClientAsync(Database database, BatchImporter run, bool ignoreExisting, CancellationToken cancellationToken) =>
        new(await RecordWriter.OpenAsync(database, RecordTable.Client, cancellationToken, ignoreExisting).ConfigureAwait(false)) { Run = run, Clock = run.Clock };

    /// <summary>For a run that inserted through its own path (a peer): counts its one committed transaction.</summary>
    public void MarkCommitted(long records) => Counted(records);

    public ValueTask DisposeAsync() => _writer.DisposeAsync();
}
