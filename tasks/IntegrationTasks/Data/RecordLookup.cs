using System.Data;
using System.Data.Common;
using System.Runtime.CompilerServices;

namespace IntegrationTasks.Data;

/// <summary>
/// The server's database work, the same for every transport, on one open connection with prepared commands:
/// per record, one SELECT by ID (the series did one SELECT per ID; it opened a connection each time, which we
/// do not); or per range of consecutive IDs, one range query whose rows are streamed as they come.
/// </summary>
public sealed class RecordLookup : IAsyncDisposable
{
    private readonly Database _database;
    private readonly DbConnection _connection;
    private readonly DbCommand _byId;
    private readonly DbParameter _id;
    private readonly DbCommand _byRange;
    private readonly DbParameter _first;
    private readonly DbParameter _last;

    private RecordLookup(Database database, DbConnection connection, ServerWork work)
    {
        _database = database;
        _connection = connection;
        Work = work;
        var table = RecordTable.Service;
        _byId = connection.CreateCommand();
        _byId.CommandText = $"SELECT {table.ColumnList} FROM {table.Name} WHERE {table.IdColumn} = @id";
        _id = SqlDialect.AddParameter(_byId, "@id", DbType.Int32);
        _byId.Prepare();
        _byRange = connection.CreateCommand();
        _byRange.CommandText = $"SELECT {table.ColumnList} FROM {table.Name} WHERE {table.IdColumn} BETWEEN @first AND @last ORDER BY {table.IdColumn}";
        _first = SqlDialect.AddParameter(_byRange, "@first", DbType.Int32);
        _last = SqlDialect.AddParameter(_byRange, "@last", DbType.Int32);
        _byRange.Prepare();
    }

    public ServerWork Work { get; }

    public static async Task<RecordLookup> OpenAsync(Database database, ServerWork work, CancellationToken cancellationToken)
    {
        var connection = await database.OpenAsync(cancellationToken).ConfigureAwait(false);
        try
        {
            return new RecordLookup(database, connection, work);
        }
        catch (DbException e)
        {
            await connection.DisposeAsync().ConfigureAwait(false);
            throw new IntegrationException(ErrorCodes.DatabaseFailure,
                $"Cannot prepare the lookup on {RecordTable.Service.Name} ({database.Describe()}): {e.Message}", e);
        }
    }

    /// <summary>The record with that ID, or null when the server has none (always one SELECT by ID).</summary>
    public async ValueTask<ServiceRecord?> FindAsync(int id, CancellationToken cancellationToken)
    {
        _id.Value = id;
        try
        {
            if (_database.Dialect.PrefersSynchronousCalls)
            {
                using var reader = _byId.ExecuteReader(CommandBehavior.SingleRow);
                return reader.Read() ? RecordMapping.Read(reader) : null;
            }
            await using (var reader = await _byId.ExecuteReaderAsync(CommandBehavior.SingleRow, cancellationToken)
                             .ConfigureAwait(false))
            {
                return await reader.ReadAsync(cancellationToken).ConfigureAwait(false) ? RecordMapping.Read(reader) : null;
            }
        }
        catch (DbException e)
        {
            throw new IntegrationException(ErrorCodes.DatabaseFailure, $"Lookup of ID {id} failed: {e.Message}", e);
        }
    }

    /// <summary>
    /// The records of these IDs that exist, in the order asked (unknown IDs left out): one SELECT per ID, or in
    /// <see cref="ServerWork.Range"/> one range query per run of consecutive ascending IDs.
    /// </summary>
    public async IAsyncEnumerable<ServiceRecord> ReadAsync(IReadOnlyList<int> ids, [EnumeratorCancellation] CancellationToken cancellationToken)
    {
        if (Work == ServerWork.PerRecord)
        {
            foreach (var id in ids)
            {
                if (await FindAsync(id, cancellationToken).ConfigureAwait(false) is { } record)
                    yield return record;
            }
            yield break;
        }
        for (var start = 0; start < ids.Count;)
        {
            var end = start + 1;
            while (end < ids.Count && ids[end - 1] < int.MaxValue && ids[end] == ids[end - 1] + 1)
                end++;
            await foreach (var record in ReadRangeAsync(ids[start], ids[end - 1], cancellationToken).ConfigureAwait(false))
                yield return record;
            start = end;
        }
    }

    /// <summary>The records of IDs first..last in ID order, in this lookup's mode.</summary>
    public IAsyncEnumerable<ServiceRecord> ReadAsync(int firstId, int count, CancellationToken cancellationToken) =>
        Work == ServerWork.Range
            ? ReadRangeAsync(firstId, firstId + (count - 1), cancellationToken)
            : ReadAsync(new ConsecutiveIds(firstId, count), cancellationToken);

    private async IAsyncEnumerable<ServiceRecord> ReadRangeAsync(int firstId, int lastId, [EnumeratorCancellation] CancellationToken cancellationToken)
    {
        _first.Value = firstId;
        _last.Value = lastId;
        DbDataReader reader;
        try
        {
            reader = _database.Dialect.PrefersSynchronousCalls
                ? _byRange.ExecuteReader(CommandBehavior.SequentialAccess)
                : await _byRange.ExecuteReaderAsync(CommandBehavior.SequentialAccess, cancellationToken).ConfigureAwait(false);
        }
        catch (DbException e)
        {
            throw new IntegrationException(ErrorCodes.DatabaseFailure, $"Reading IDs {firstId}..{lastId} failed: {e.Message}", e);
        }
        await using (reader.ConfigureAwait(false))
        {
            while (true)
            {
                ServiceRecord record;
                try
                {
                    if (!(_database.Dialect.PrefersSynchronousCalls ? reader.Read() : await reader.ReadAsync(cancellationToken).ConfigureAwait(false)))
                        break;
                    record = RecordMapping.Read(reader);
                }
                catch (DbException e)
                {
                    throw new IntegrationException(ErrorCodes.DatabaseFailure, $"Reading IDs {firstId}..{lastId} failed: {e.Message}", e);
                }
                yield return record;
            }
        }
    }

    public async ValueTask DisposeAsync()
    {
        await _byId.DisposeAsync().ConfigureAwait(false);
        await _byRange.DisposeAsync().ConfigureAwait(false);
        await _connection.DisposeAsync().ConfigureAwait(false);
    }
}

/// <summary>IDs first..first + count − 1 as a list, without allocating one.</summary>
public sealed class ConsecutiveIds(int first, int count) : IReadOnlyList<int>
{
    public int Count => count;

    public int this[int index] => (uint)index < (uint)count ? first + index : throw new ArgumentOutOfRangeException(nameof(index));

    public IEnumerator<int> GetEnumerator() => Enumerable.Range(first, count).GetEnumerator();

    System.Collections.IEnumerator System.Collections.IEnumerable.GetEnumerator() => GetEnumerator();
}
