using System.Data;
using System.Data.Common;
using Npgsql;
using NpgsqlTypes;

namespace IntegrationTasks.Data;

internal sealed class PostgresDialect : SqlDialect
{
    public override DbConnection CreateConnection(string connectionString) => new NpgsqlConnection(connectionString);

    protected override string IdType => "integer";
    protected override string StringType => "varchar(200)";
    protected override string DoubleType => "double precision";
    // Microsecond precision; generated timestamps carry milliseconds, so they round-trip exactly.
    protected override string DateTimeType => "timestamp(6) without time zone";
    public override DbType DateTimeDbType => DbType.DateTime2;
    protected override string BinaryType => "bytea";
    protected override string TextType => "text";

    /// <summary>
    /// Autovacuum visits a table some time after many rows arrive (since PostgreSQL 13 for inserts alone, and analyses it), which on
    /// a freshly generated ServiceTable is during the first transports' runs. Vacuumed and analysed now, every transport reads the
    /// same settled table (visibility map set, statistics current) and no maintenance of its own starts under one of them.
    /// </summary>
    public override string? SettleTableSql(RecordTable table) => $"VACUUM (ANALYZE) {table.Name}";

    /// <summary>
    /// Binary COPY inside a transaction: the fastest insert PostgreSQL has, still all-or-nothing. COPY cannot skip rows,
    /// so an idempotent import copies the batch into a session-local staging table and moves it with one
    /// INSERT … SELECT … ON CONFLICT DO NOTHING, in the same transaction: three round trips a batch instead of one a row.
    /// </summary>
    public override async Task<TimeSpan> InsertBatchAsync(DbConnection connection, RecordTable table,
        IReadOnlyList<ServiceRecord> records, bool ignoreExisting, CancellationToken cancellationToken)
    {
        var npgsql = (NpgsqlConnection)connection;
        var (transaction, begun) = await BeginTimedAsync(npgsql, cancellationToken).ConfigureAwait(false); // row locks only: no wait here
        await using var _ = transaction;
        if (ignoreExisting)
        {
            var staging = $"{table.Name}_staging";
            // ON COMMIT DELETE ROWS: emptied by every commit, created once per session (a rollback undoes its creation too).
            // Npgsql runs every command of a connection in its open transaction.
            await Database.ExecuteAsync(npgsql,
                $"CREATE TEMP TABLE IF NOT EXISTS {staging} (LIKE {table.Name}) ON COMMIT DELETE ROWS", cancellationToken).ConfigureAwait(false);
            await CopyAsync(npgsql, staging, table, records, cancellationToken).ConfigureAwait(false);
            await Database.ExecuteAsync(npgsql,
                $"INSERT INTO {table.Name} ({table.ColumnList}) SELECT {table.ColumnList} FROM {staging} ON CONFLICT ({table.IdColumn}) DO NOTHING",
                cancellationToken).ConfigureAwait(false);
        }
        else
        {
            await CopyAsync(npgsql, table.Name, table, records, cancellationToken).ConfigureAwait(false);
        }
        // Not cancellable: a commit that has started finishes, so the caller always knows whether the batch is in (a resuming client relies on it).
        await transaction.CommitAsync(CancellationToken.None).ConfigureAwait(false);
        return begun;
    }

    private static async Task CopyAsync(NpgsqlConnection connection, string target, RecordTable table,
        IReadOnlyList<ServiceRecord> records, CancellationToken cancellationToken)
    {
        await using var importer = await connection.BeginBinaryImportAsync(
            $"COPY {target} ({table.ColumnList}) FROM STDIN (FORMAT BINARY)", cancellationToken).ConfigureAwait(false);
        foreach (var record in records)
        {
            await importer.StartRowAsync(cancellationToken).ConfigureAwait(false);
            await importer.WriteAsync(record.Id, NpgsqlDbType.Integer, cancellationToken).ConfigureAwait(false);
            await importer.WriteAsync(record.Desc, NpgsqlDbType.Varchar, cancellationToken).ConfigureAwait(false);
            await importer.WriteAsync(record.Value, NpgsqlDbType.Double, cancellationToken).ConfigureAwait(false);
            await importer.WriteAsync(record.CreationDate, NpgsqlDbType.Timestamp, cancellationToken).ConfigureAwait(false);
            await WriteNullableAsync(importer, record.StringField1, cancellationToken).ConfigureAwait(false);
            await WriteNullableAsync(importer, record.StringField2, cancellationToken).ConfigureAwait(false);
            if (record.Payload is null)
                await importer.WriteNullAsync(cancellationToken).ConfigureAwait(false);
            else
                await importer.WriteAsync(record.Payload, NpgsqlDbType.Bytea, cancellationToken).ConfigureAwait(false);
            await WriteNullableAsync(importer, record.PayloadText, cancellationToken, NpgsqlDbType.Text).ConfigureAwait(false);
        }
        await importer.CompleteAsync(cancellationToken).ConfigureAwait(false);
    }

    private static Task WriteNullableAsync(NpgsqlBinaryImporter importer, string? value, CancellationToken cancellationToken,
        NpgsqlDbType type = NpgsqlDbType.Varchar) =>
        value is null
            ? importer.WriteNullAsync(cancellationToken)
            : importer.WriteAsync(value, type, cancellationToken);
}
