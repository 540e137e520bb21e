using System.Data;
using System.Data.Common;
using Microsoft.Data.Sqlite;
using MySqlConnector;
using Npgsql;

namespace IntegrationTasks.Data;

/// <summary>
/// What a database administrator uses instead of any integration method: the databases' own bulk paths, moving
/// ServiceTable's rows first..last into ClientTable in one transaction. The report's "Peer: …" rows.
/// </summary>
public static class PeerCopies
{
    /// <summary>The peer's name for this pair of databases, or null when there is none (the two sides differ, or SQL Server).</summary>
    public static string? NameFor(DatabaseProvider server, DatabaseProvider client) => (server, client) switch
    {
        (DatabaseProvider.Sqlite, DatabaseProvider.Sqlite) => "Peer: SQLite ATTACH",
        (DatabaseProvider.PostgreSql, DatabaseProvider.PostgreSql) => "Peer: PostgreSQL COPY",
        (DatabaseProvider.MariaDb, DatabaseProvider.MariaDb) => "Peer: MariaDB LOAD DATA",
        _ => null,
    };

    /// <summary>Copies the rows and returns how many the client's table received.</summary>
    public static Task<long> CopyAsync(Database server, Database client, int firstId, int lastId, CancellationToken cancellationToken) =>
        (server.Provider, client.Provider) switch
        {
            (DatabaseProvider.Sqlite, DatabaseProvider.Sqlite) => SqliteAttachAsync(server, client, firstId, lastId, cancellationToken),
            (DatabaseProvider.PostgreSql, DatabaseProvider.PostgreSql) => PostgresCopyPipeAsync(server, client, firstId, lastId, cancellationToken),
            (DatabaseProvider.MariaDb, DatabaseProvider.MariaDb) => MariaDbBulkCopyAsync(server, client, firstId, lastId, cancellationToken),
            _ => throw new IntegrationException(ErrorCodes.InvalidParameter,
                $"No peer copies {server.Provider} to {client.Provider}: the peers need the same provider on both sides, SQLite, PostgreSQL or MariaDB."),
        };

    private static string Select(string schema) =>
        $"SELECT {RecordTable.Service.ColumnList} FROM {schema}{RecordTable.Service.Name} " +
        $"WHERE {RecordTable.Service.IdColumn} BETWEEN @first AND @last ORDER BY {RecordTable.Service.IdColumn}";

    /// <summary>SQLite: ATTACH the server's file to the client's connection, then one INSERT … SELECT in one transaction.</summary>
    private static async Task<long> SqliteAttachAsync(Database server, Database client, int firstId, int lastId, CancellationToken cancellationToken)
    {
        var file = new SqliteConnectionStringBuilder(server.ConnectionString).DataSource;
        if (string.IsNullOrEmpty(file) || file == ":memory:" || !File.Exists(file))
            throw new IntegrationException(ErrorCodes.InvalidParameter, $"The SQLite peer attaches the server's database file, and there is none at '{file}'.");
        await using var connection = await client.OpenAsync(cancellationToken).ConfigureAwait(false);
        try
        {
            await using (var attach = connection.CreateCommand())
            {
                attach.CommandText = "ATTACH DATABASE @file AS peer_server";
                SqlDialect.AddParameter(attach, "@file", DbType.String).Value = Path.GetFullPath(file);
                attach.ExecuteNonQuery();
            }
            long copied;
            await using (var transaction = await connection.BeginTransactionAsync(cancellationToken).ConfigureAwait(false))
            {
                await using (var insert = connection.CreateCommand())
                {
                    insert.Transaction = transaction;
                    insert.CommandTimeout = 0;
                    insert.CommandText = $"INSERT INTO {RecordTable.Client.Name} ({RecordTable.Client.ColumnList}) {Select("peer_server.")}";
                    SqlDialect.AddParameter(insert, "@first", DbType.Int32).Value = firstId;
                    SqlDialect.AddParameter(insert, "@last", DbType.Int32).Value = lastId;
                    copied = insert.ExecuteNonQuery();
                }
                await transaction.CommitAsync(cancellationToken).ConfigureAwait(false);
            }
            await using (var detach = connection.CreateCommand())
            {
                detach.CommandText = "DETACH DATABASE peer_server";
                detach.ExecuteNonQuery();
            }
            return copied;
        }
        catch (DbException e)
        {
            throw new IntegrationException(ErrorCodes.DatabaseFailure, $"The SQLite peer (ATTACH + INSERT … SELECT) failed and was rolled back: {e.Message}", e);
        }
    }

    /// <summary>
    /// PostgreSQL: <c>COPY (SELECT …) TO STDOUT</c> on the server piped into <c>COPY … FROM STDIN</c> on the client, binary
    /// format, through Npgsql's raw COPY streams (no shell, no parsing; memory holds one buffer), in one client transaction.
    /// </summary>
    private static async Task<long> PostgresCopyPipeAsync(Database server, Database client, int firstId, int lastId, CancellationToken cancellationToken)
    {
        await using var source = (NpgsqlConnection)await server.OpenAsync(cancellationToken).ConfigureAwait(false);
        await using var target = (NpgsqlConnection)await client.OpenAsync(cancellationToken).ConfigureAwait(false);
        try
        {
            await using var transaction = await target.BeginTransactionAsync(cancellationToken).ConfigureAwait(false);
            // COPY takes no parameters: the bounds are integers formatted invariantly.
            var select = Select("").Replace("@first", firstId.ToString(System.Globalization.CultureInfo.InvariantCulture))
                .Replace("@last", lastId.ToString(System.Globalization.CultureInfo.InvariantCulture));
            await using (var output = await source.BeginRawBinaryCopyAsync($"COPY ({select}) TO STDOUT (FORMAT BINARY)", cancellationToken).ConfigureAwait(false))
            await using (var input = await target.BeginRawBinaryCopyAsync(
                             $"COPY {RecordTable.Client.Name} ({RecordTable.Client.ColumnList}) FROM STDIN (FORMAT BINARY)", cancellationToken).ConfigureAwait(false))
            {
                await output.CopyToAsync(input, 64 * 1024, cancellationToken).ConfigureAwait(false);
            }
            long copied;
            await using (var count = target.CreateCommand())
            {
                count.Transaction = transaction;
                count.CommandText = $"SELECT COUNT(*) FROM {RecordTable.Client.Name} WHERE {RecordTable.Client.IdColumn} BETWEEN {firstId} AND {lastId}";
                copied = Convert.ToInt64(await count.ExecuteScalarAsync(cancellationToken).ConfigureAwait(false), System.Globalization.CultureInfo.InvariantCulture);
            }
            await transaction.CommitAsync(cancellationToken).ConfigureAwait(false);
            return copied;
        }
        catch (Exception e) when (e is DbException or IOException)
        {
            throw new IntegrationException(ErrorCodes.DatabaseFailure, $"The PostgreSQL peer (COPY TO STDOUT → COPY FROM STDIN) failed and was rolled back: {e.Message}", e);
        }
    }

    /// <summary>
    /// MariaDB: the server's rows read by one prepared SELECT (binary protocol: doubles exact) and streamed into
    /// <c>LOAD DATA LOCAL INFILE</c> on the client through MySqlBulkCopy, in one client transaction; memory holds a row at a time.
    /// </summary>
    private static async Task<long> MariaDbBulkCopyAsync(Database server, Database client, int firstId, int lastId, CancellationToken cancellationToken)
    {
        await using var source = await server.OpenAsync(cancellationToken).ConfigureAwait(false);
        await using var target = (MySqlConnection)await client.OpenAsync(cancellationToken, forBatchInserts: true).ConfigureAwait(false);
        try
        {
            await using var transaction = await target.BeginTransactionAsync(cancellationToken).ConfigureAwait(false);
            await using var select = source.CreateCommand();
            select.CommandTimeout = 0;
            select.CommandText = Select("");
            SqlDialect.AddParameter(select, "@first", DbType.Int32).Value = firstId;
            SqlDialect.AddParameter(select, "@last", DbType.Int32).Value = lastId;
            await select.PrepareAsync(cancellationToken).ConfigureAwait(false);
            await using var rows = await select.ExecuteReaderAsync(cancellationToken).ConfigureAwait(false);
            var result = await MariaDbDialect.BulkCopy(target, transaction, RecordTable.Client).WriteToServerAsync(rows, cancellationToken)
                .ConfigureAwait(false);
            MariaDbDialect.ThrowOnChangedValues(result, sent: null, "the peer's rows");
            await transaction.CommitAsync(cancellationToken).ConfigureAwait(false);
            return result.RowsInserted;
        }
        catch (Exception e) when (e is DbException or IOException)
        {
            throw new IntegrationException(ErrorCodes.DatabaseFailure, $"The MariaDB peer (SELECT → LOAD DATA LOCAL INFILE) failed and was rolled back: {e.Message}", e);
        }
    }
}
