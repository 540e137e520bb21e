using System.Data;
using System.Data.Common;
using MySqlConnector;

namespace IntegrationTasks.Data;

/// <summary>
/// MariaDB (and MySQL) through MySqlConnector. Every column is lossless: DOUBLE keeps all 64 bits (read and written in the binary
/// protocol, see <see cref="ReadsPrepared"/>), DATETIME(6) the generated milliseconds, LONGBLOB and LONGTEXT a megabyte and more,
/// and the tables are utf8mb4 with a binary collation, so any UTF-8 text and a trailing space come back as they went in.
/// </summary>
internal sealed class MariaDbDialect : SqlDialect
{
    /// <summary>Prepared statements always (doubles in the binary protocol), whatever the connection string says.</summary>
    public override DbConnection CreateConnection(string connectionString) =>
        new MySqlConnection(new MySqlConnectionStringBuilder(connectionString) { IgnorePrepare = false }.ConnectionString);

    /// <summary>
    /// A writer may send a local stream as <c>LOAD DATA LOCAL INFILE</c> (what <see cref="MySqlBulkCopy"/> sends), unless the
    /// connection string says otherwise; no other connection may.
    /// </summary>
    public override DbConnection CreateWriterConnection(string connectionString)
    {
        var builder = new MySqlConnectionStringBuilder(connectionString) { IgnorePrepare = false };
        if (!builder.ContainsKey("AllowLoadLocalInfile"))
            builder.AllowLoadLocalInfile = true;
        return new MySqlConnection(builder.ConnectionString);
    }

    protected override string IdType => "INT";
    protected override string StringType => "VARCHAR(200)";
    protected override string DoubleType => "DOUBLE";
    protected override string DateTimeType => "DATETIME(6)";
    public override DbType DateTimeDbType => DbType.DateTime;
    protected override string BinaryType => "LONGBLOB";
    protected override string TextType => "LONGTEXT";

    /// <summary>
    /// The text protocol sends a DOUBLE as decimal text of the server's choosing; a prepared statement's binary protocol sends its
    /// eight bytes. Every read of the records is prepared, so a value can never come back a digit short on either side.
    /// </summary>
    public override bool ReadsPrepared => true;

    public override string CreateTableSql(RecordTable table) =>
        $"CREATE TABLE IF NOT EXISTS {table.Name} ({ColumnDefinitions(table)}) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin";

    /// <summary>Statistics current before the runs, as PostgreSQL's VACUUM (ANALYZE) leaves them.</summary>
    public override string? SettleTableSql(RecordTable table) => $"ANALYZE TABLE {table.Name}";

    /// <summary>
    /// Strict mode for every session whatever the server's default: a NULL in a NOT NULL column, a string too long or a date out of
    /// range is an error that fails the statement, never a warning that stores something else. And every warning of a statement
    /// kept to be read (the server keeps 64 by default), so that a LOAD DATA's are all seen.
    /// </summary>
    public override Task ConfigureAsync(DbConnection connection, CancellationToken cancellationToken) =>
        Database.ExecuteAsync(connection,
            "SET SESSION sql_mode = 'STRICT_ALL_TABLES,NO_ZERO_IN_DATE,NO_ZERO_DATE,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION', "
            + "max_error_count = 65535", cancellationToken);

    /// <summary>
    /// LOAD DATA LOCAL INFILE in the batch's transaction (MySqlBulkCopy streams the rows): MariaDB's fastest insert, as binary COPY
    /// is PostgreSQL's, still all-or-nothing. With LOCAL the server turns a row it cannot take as given into a warning and goes
    /// on, so any warning rolls the batch back. LOAD DATA cannot skip only a repeated key (its IGNORE would hide every other
    /// warning behind the duplicates'), so an idempotent import loads the batch into a session-local staging table with no key,
    /// under the same rule, and moves it with one strict INSERT … SELECT … ON DUPLICATE KEY UPDATE that changes nothing: three
    /// round trips a batch, as on PostgreSQL.
    /// </summary>
    public override async Task<TimeSpan> InsertBatchAsync(DbConnection connection, RecordTable table,
        IReadOnlyList<ServiceRecord> records, bool ignoreExisting, CancellationToken cancellationToken)
    {
        var mysql = (MySqlConnection)connection;
        if (ignoreExisting)
            // Made once a session with the table's columns and no key (CREATE TEMPORARY commits nothing); InnoDB, so emptied by a rollback too.
            await Database.ExecuteAsync(mysql,
                $"CREATE TEMPORARY TABLE IF NOT EXISTS {Staging(table)} ENGINE=InnoDB AS SELECT {table.ColumnList} FROM {table.Name} WHERE 1 = 0", cancellationToken)
                .ConfigureAwait(false);
        var (transaction, begun) = await BeginTimedAsync(connection, cancellationToken).ConfigureAwait(false);
        await using var _ = transaction;
        var rows = new DataTable();
        foreach (var (name, type) in Columns)
            rows.Columns.Add(name, type);
        foreach (var record in records)
            rows.Rows.Add(record.Id, (object?)record.Desc ?? DBNull.Value, record.Value, record.CreationDate, (object?)record.StringField1 ?? DBNull.Value,
                (object?)record.StringField2 ?? DBNull.Value, (object?)record.Payload ?? DBNull.Value, (object?)record.PayloadText ?? DBNull.Value);
        var target = ignoreExisting ? table with { Name = Staging(table) } : table;
        var result = await BulkCopy(mysql, (MySqlTransaction)transaction, target).WriteToServerAsync(rows, cancellationToken).ConfigureAwait(false);
        ThrowOnChangedValues(result, records.Count, $"a batch into {table.Name}");
        if (ignoreExisting)
        {
            await Database.ExecuteAsync(mysql, $"INSERT INTO {table.Name} ({table.ColumnList}) SELECT {table.ColumnList} FROM {target.Name} "
                + $"ON DUPLICATE KEY UPDATE {table.IdColumn} = {table.Name}.{table.IdColumn}", cancellationToken, transaction).ConfigureAwait(false);
            await Database.ExecuteAsync(mysql, $"DELETE FROM {target.Name}", cancellationToken, transaction).ConfigureAwait(false);
        }
        // Not cancellable: a commit that has started finishes, so the caller always knows whether the batch is in (a resuming client relies on it).
        await transaction.CommitAsync(CancellationToken.None).ConfigureAwait(false);
        return begun;
    }

    private static string Staging(RecordTable table) => $"{table.Name}_staging";

    private static readonly (string Name, Type Type)[] Columns =
    [
        ("Id", typeof(int)), ("Desc", typeof(string)), ("Value", typeof(double)), ("CreationDate", typeof(DateTime)), ("StringField1", typeof(string)),
        ("StringField2", typeof(string)), ("Payload", typeof(byte[])), ("PayloadText", typeof(string)),
    ];

    /// <summary>A bulk copy into <paramref name="table"/>'s columns in the order of <see cref="RecordTable.ColumnList"/>, in the transaction.</summary>
    internal static MySqlBulkCopy BulkCopy(MySqlConnection connection, MySqlTransaction transaction, RecordTable table)
    {
        var bulkCopy = new MySqlBulkCopy(connection, transaction) { DestinationTableName = table.Name, BulkCopyTimeout = 0 };
        var columns = table.ColumnList.Split(", ");
        for (var i = 0; i < columns.Length; i++)
            bulkCopy.ColumnMappings.Add(new MySqlBulkCopyColumnMapping(i, columns[i]));
        return bulkCopy;
    }

    /// <summary>
    /// IT1003 for a LOAD DATA that warned (a NULL made "", a value cut, a repeated key skipped) or took fewer rows than it was
    /// sent (when known): the transaction is rolled back by the caller.
    /// </summary>
    internal static void ThrowOnChangedValues(MySqlBulkCopyResult result, long? sent, string what)
    {
        if (result.Warnings.Count > 0)
            throw new IntegrationException(ErrorCodes.DatabaseFailure,
                $"MariaDB would have changed {what} on the way in, so it was rolled back: {result.Warnings[0].Message} ({(int)result.Warnings[0].ErrorCode}).");
        if (sent is not null && result.RowsInserted != sent)
            throw new IntegrationException(ErrorCodes.DatabaseFailure,
                $"MariaDB took {result.RowsInserted:N0} of the {sent.Value:N0} rows of {what}, so it was rolled back.");
    }
}
