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
    public override DbConnection CreateConnection(string connectionString) => new MySqlConnection(connectionString);

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
    /// range is an error that fails the batch, never a warning that stores something else.
    /// </summary>
    public override Task ConfigureAsync(DbConnection connection, CancellationToken cancellationToken) =>
        Database.ExecuteAsync(connection,
            "SET SESSION sql_mode = 'STRICT_ALL_TABLES,NO_ZERO_IN_DATE,NO_ZERO_DATE,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION'", cancellationToken);

    /// <summary>
    /// ON DUPLICATE KEY with an assignment that changes nothing: only the key's conflict is skipped. INSERT IGNORE would also turn a
    /// NULL in a NOT NULL column into a warning and store an empty string in its place.
    /// </summary>
    protected override string InsertIgnoringExistingSql(RecordTable table, string values) =>
        $"INSERT INTO {table.Name} ({table.ColumnList}) VALUES ({values}) ON DUPLICATE KEY UPDATE {table.IdColumn} = {table.IdColumn}";

    /// <summary>The same connection string, allowed to send a local stream as LOAD DATA LOCAL INFILE (what MySqlBulkCopy sends).</summary>
    public static string WithLocalInfile(string connectionString) =>
        new MySqlConnectionStringBuilder(connectionString) { AllowLoadLocalInfile = true }.ConnectionString;
}
