using System.Data;
using System.Data.Common;
using System.Runtime.CompilerServices;

namespace IntegrationTasks.Data;

/// <summary>Streams a table's rows in ID order, so verification needs memory for one row per side.</summary>
public static class RecordReader
{
    public static async IAsyncEnumerable<ServiceRecord> ReadOrderedAsync(Database database, RecordTable table,
        int? firstId, int? lastId, [EnumeratorCancellation] CancellationToken cancellationToken)
    {
        await using var connection = await database.OpenAsync(cancellationToken).ConfigureAwait(false);
        await using var command = connection.CreateCommand();
        command.CommandTimeout = 0;
        var where = "";
        if (firstId is not null && lastId is not null)
        {
            where = $" WHERE {table.IdColumn} BETWEEN @first AND @last";
            SqlDialect.AddParameter(command, "@first", DbType.Int32).Value = firstId.Value;
            SqlDialect.AddParameter(command, "@last", DbType.Int32).Value = lastId.Value;
        }
        command.CommandText = $"SELECT {table.ColumnList} FROM {table.Name}{where} ORDER BY {table.IdColumn}";
        DbDataReader reader;
        try
        {
            if (database.Dialect.ReadsPrepared)
                await command.PrepareAsync(cancellationToken).ConfigureAwait(false);
            reader = await command.ExecuteReaderAsync(CommandBehavior.SequentialAccess, cancellationToken).ConfigureAwait(false);
        }
        catch (DbException e)
        {
            throw new IntegrationException(ErrorCodes.DatabaseFailure,
                $"Reading {table.Name} ({database.Describe()}) failed: {e.Message}", e);
        }
        await using (reader.ConfigureAwait(false))
        {
            while (await reader.ReadAsync(cancellationToken).ConfigureAwait(false))
                yield return RecordMapping.Read(reader);
        }
    }
}
