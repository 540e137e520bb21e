using System.Data.Common;

namespace IntegrationTasks.Data;

/// <summary>
/// The client's per-batch work, the same for every transport: one transaction per batch, so a batch
/// commits whole or not at all. Also used by data generation for ServiceTable.
/// </summary>
public sealed class RecordWriter : IAsyncDisposable
{
    private readonly Database _database;
    private readonly DbConnection _connection;
    private readonly RecordTable _table;

    private readonly bool _ignoreExisting;

    private RecordWriter(Database database, DbConnection connection, RecordTable table, bool ignoreExisting)
    {
        _database = database;
        _connection = connection;
        _table = table;
        _ignoreExisting = ignoreExisting;
    }

    /// <param name="ignoreExisting">Skip rows whose ID is already there: an idempotent import.</param>
    public static async Task<RecordWriter> OpenAsync(Database database, RecordTable table, CancellationToken cancellationToken,
        bool ignoreExisting = false)
    {
        var connection = await database.OpenAsync(cancellationToken, forBatchInserts: true).ConfigureAwait(false);
        return new RecordWriter(database, connection, table, ignoreExisting);
    }

    /// <summary>Inserts one batch in one transaction; returns how long the transaction waited to begin (on SQLite, for the one writer).</summary>
    public async Task<TimeSpan> InsertBatchAsync(IReadOnlyList<ServiceRecord> records, CancellationToken cancellationToken)
    {
        if (records.Count == 0)
            return TimeSpan.Zero;
        try
        {
            return await _database.Dialect.InsertBatchAsync(_connection, _table, records, _ignoreExisting, cancellationToken).ConfigureAwait(false);
        }
        catch (DbException e)
        {
            throw new IntegrationException(ErrorCodes.DatabaseFailure,
                $"Inserting a batch of {records.Count} records (IDs {records[0].Id}..{records[^1].Id}) into {_table.Name} failed " +
                $"and was rolled back: {e.Message}", e);
        }
    }

    public ValueTask DisposeAsync() => _connection.DisposeAsync();
}
