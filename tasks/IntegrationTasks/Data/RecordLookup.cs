using System.Data;
using System.Data.Common;
using IntegrationTasks.Common;

namespace IntegrationTasks.Data;

/// <summary>
/// The server's per-record work, the same for every transport: one prepared SELECT by ID on one
/// open connection (the series did one SELECT per ID; it opened a connection each time, which we do not).
/// </summary>
public sealed class RecordLookup : IAsyncDisposable
{
    private readonly Database _database;
    private readonly DbConnection _connection;
    private readonly DbCommand _command;
    private readonly DbParameter _id;

    private RecordLookup(Database database, DbConnection connection)
    {
        _database = database;
        _connection = connection;
        _command = connection.CreateCommand();
        var table = RecordTable.Service;
        _command.CommandText = $"SELECT {table.ColumnList} FROM {table.Name} WHERE {table.IdColumn} = @id";
        _id = SqlDialect.AddParameter(_command, "@id", DbType.Int32);
        _command.Prepare();
    }

    public static async Task<RecordLookup> OpenAsync(Database database, CancellationToken cancellationToken)
    {
        var connection = await database.OpenAsync(cancellationToken).ConfigureAwait(false);
        try
        {
            return new RecordLookup(database, connection);
        }
        catch (DbException e)
        {
            await connection.DisposeAsync().ConfigureAwait(false);
            throw new IntegrationException(ErrorCodes.DatabaseFailure,
                $"Cannot prepare the lookup on {RecordTable.Service.Name} ({database.Describe()}): {e.Message}", e);
        }
    }

    /// <summary>The record with that ID, or null when the server has none.</summary>
    public async ValueTask<ServiceRecord?> FindAsync(int id, CancellationToken cancellationToken)
    {
        _id.Value = id;
        try
        {
            if (_database.Dialect.PrefersSynchronousCalls)
            {
                using var reader = _command.ExecuteReader(CommandBehavior.SingleRow);
                return reader.Read() ? RecordMapping.Read(reader) : null;
            }
            await using (var reader = await _command.ExecuteReaderAsync(CommandBehavior.SingleRow, cancellationToken)
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

    public async ValueTask DisposeAsync()
    {
        await _command.DisposeAsync().ConfigureAwait(false);
        await _connection.DisposeAsync().ConfigureAwait(false);
    }
}
