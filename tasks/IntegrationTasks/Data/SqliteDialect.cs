using System.Data;
using System.Data.Common;
using Microsoft.Data.Sqlite;

namespace IntegrationTasks.Data;

internal sealed class SqliteDialect : SqlDialect
{
    public override DbConnection CreateConnection(string connectionString) => new SqliteConnection(connectionString);

    public override bool PrefersSynchronousCalls => true;

    protected override string IdType => "INTEGER";
    protected override string StringType => "VARCHAR(200)";
    protected override string DoubleType => "REAL";
    // TEXT affinity on purpose: DATETIME would get NUMERIC affinity. Values are ISO-8601 with 7 fractional digits.
    protected override string DateTimeType => "TEXT";
    public override DbType DateTimeDbType => DbType.DateTime;
    protected override string BinaryType => "BLOB";
    protected override string TextType => "TEXT";

    // SQLite adds one column per ALTER TABLE.
    public override string AddPayloadColumnsSql(RecordTable table) =>
        $"ALTER TABLE {table.Name} ADD COLUMN Payload {BinaryType} NULL; ALTER TABLE {table.Name} ADD COLUMN PayloadText {TextType} NULL";

    public override string EmptyTableSql(RecordTable table) => $"DELETE FROM {table.Name}";

    public override Task PrepareTargetAsync(DbConnection connection, CancellationToken cancellationToken)
    {
        var builder = new SqliteConnectionStringBuilder(connection.ConnectionString);
        var file = builder.DataSource;
        if (string.IsNullOrEmpty(file) || file == ":memory:" || builder.Mode is SqliteOpenMode.Memory or SqliteOpenMode.ReadOnly)
            return Task.CompletedTask;
        // A database the suite makes is its owner's alone: its folder (when made here) and the file, whose mode SQLite gives its
        // journal and WAL files too.
        var path = Path.GetFullPath(file);
        if (Path.GetDirectoryName(path) is { } folder)
            Common.OwnerOnlyFiles.CreateDirectoryIfMissing(folder);
        Common.OwnerOnlyFiles.CreateFileIfMissing(path);
        return Task.CompletedTask;
    }

    public override async Task ConfigureAsync(DbConnection connection, CancellationToken cancellationToken)
    {
        // WAL lets the verifier read while a writer works; NORMAL is WAL's usual durability level.
        await Database.ExecuteAsync(connection, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;", cancellationToken)
            .ConfigureAwait(false);
    }
}
