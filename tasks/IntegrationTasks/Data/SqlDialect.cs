using System.Data;
using System.Data.Common;

namespace IntegrationTasks.Data;

/// <summary>What differs between the providers: connection type, DDL, bulk insert, per-connection settings.</summary>
internal abstract class SqlDialect
{
    public abstract DbConnection CreateConnection(string connectionString);

    /// <summary>A connection that inserts batches (a client's writer, a peer's target): on MariaDB one that may send LOAD DATA LOCAL.</summary>
    public virtual DbConnection CreateWriterConnection(string connectionString) => CreateConnection(connectionString);

    /// <summary>Microsoft.Data.Sqlite runs its async methods synchronously; calling the sync ones saves the Task overhead.</summary>
    public virtual bool PrefersSynchronousCalls => false;

    /// <summary>Whether a read of the records must be a prepared statement for its values to come back exactly (MariaDB's doubles).</summary>
    public virtual bool ReadsPrepared => false;

    protected abstract string IdType { get; }
    protected abstract string StringType { get; }
    protected abstract string DoubleType { get; }
    protected abstract string DateTimeType { get; }
    protected abstract string BinaryType { get; }
    protected abstract string TextType { get; }
    public abstract DbType DateTimeDbType { get; }

    public virtual Task PrepareTargetAsync(DbConnection connection, CancellationToken cancellationToken) => Task.CompletedTask;

    public virtual Task ConfigureAsync(DbConnection connection, CancellationToken cancellationToken) => Task.CompletedTask;

    public virtual string CreateTableSql(RecordTable table) =>
        $"CREATE TABLE IF NOT EXISTS {table.Name} ({ColumnDefinitions(table)})";

    protected string ColumnDefinitions(RecordTable table) =>
        $"{table.IdColumn} {IdType} NOT NULL PRIMARY KEY, " +
        $"{table.DescColumn} {StringType} NOT NULL, " +
        $"Value {DoubleType} NOT NULL, " +
        $"CreationDate {DateTimeType} NOT NULL, " +
        $"StringField1 {StringType} NULL, " +
        $"StringField2 {StringType} NULL, " +
        PayloadColumnDefinitions;

    private string PayloadColumnDefinitions => $"Payload {BinaryType} NULL, PayloadText {TextType} NULL";

    /// <summary>
    /// Adds the payload columns to a table made before there were any (the series' six columns); the table's rows keep no payload.
    /// </summary>
    public virtual string AddPayloadColumnsSql(RecordTable table) => $"ALTER TABLE {table.Name} ADD Payload {BinaryType} NULL, ADD PayloadText {TextType} NULL";

    public virtual string EmptyTableSql(RecordTable table) => $"TRUNCATE TABLE {table.Name}";

    /// <summary>
    /// What leaves a freshly filled table settled, so that no maintenance of the database's own starts on it during the transfers;
    /// null where there is none to do.
    /// </summary>
    public virtual string? SettleTableSql(RecordTable table) => null;

    /// <summary>
    /// An INSERT that skips rows whose ID is already there (for imports that may see a batch twice); PostgreSQL's and SQLite's
    /// syntax. Only the key's conflict is skipped: SQLite's INSERT OR IGNORE would also drop a row that breaks NOT NULL, silently.
    /// </summary>
    protected virtual string InsertIgnoringExistingSql(RecordTable table, string values) =>
        $"INSERT INTO {table.Name} ({table.ColumnList}) VALUES ({values}) ON CONFLICT ({table.IdColumn}) DO NOTHING";

    /// <summary>
    /// Inserts the records in one transaction: all of them or none. With <paramref name="ignoreExisting"/>,
    /// rows whose ID is already in the table are skipped, which makes a repeated batch harmless.
    /// Returns how long the transaction took to begin: on SQLite (BEGIN IMMEDIATE) the wait for the database's one write lock.
    /// </summary>
    public virtual async Task<TimeSpan> InsertBatchAsync(DbConnection connection, RecordTable table,
        IReadOnlyList<ServiceRecord> records, bool ignoreExisting, CancellationToken cancellationToken)
    {
        var (transaction, begun) = await BeginTimedAsync(connection, cancellationToken).ConfigureAwait(false);
        await using var _ = transaction;
        await using var command = connection.CreateCommand();
        command.Transaction = transaction;
        const string values = "@id, @desc, @value, @date, @s1, @s2, @payload, @text";
        command.CommandText = ignoreExisting
            ? InsertIgnoringExistingSql(table, values)
            : $"INSERT INTO {table.Name} ({table.ColumnList}) VALUES ({values})";
        var id = AddParameter(command, "@id", DbType.Int32);
        var desc = AddParameter(command, "@desc", DbType.String, RecordTable.StringLength);
        var value = AddParameter(command, "@value", DbType.Double);
        var date = AddParameter(command, "@date", DateTimeDbType);
        var s1 = AddParameter(command, "@s1", DbType.String, RecordTable.StringLength);
        var s2 = AddParameter(command, "@s2", DbType.String, RecordTable.StringLength);
        var payload = AddParameter(command, "@payload", DbType.Binary, -1);
        var text = AddParameter(command, "@text", DbType.String, -1);
        command.Prepare();
        foreach (var record in records)
        {
            id.Value = record.Id;
            desc.Value = (object?)record.Desc ?? DBNull.Value; // a null that slipped through is the database's NOT NULL error, not a provider's exception
            value.Value = record.Value;
            date.Value = record.CreationDate;
            s1.Value = (object?)record.StringField1 ?? DBNull.Value;
            s2.Value = (object?)record.StringField2 ?? DBNull.Value;
            payload.Value = (object?)record.Payload ?? DBNull.Value;
            text.Value = (object?)record.PayloadText ?? DBNull.Value;
            if (PrefersSynchronousCalls)
                command.ExecuteNonQuery();
            else
                await command.ExecuteNonQueryAsync(cancellationToken).ConfigureAwait(false);
        }
        // Not cancellable: a commit that has started finishes, so the caller always knows whether the batch is in (a resuming client relies on it).
        await transaction.CommitAsync(CancellationToken.None).ConfigureAwait(false);
        return begun;
    }

    /// <summary>A batch's transaction, and how long it took to begin (SQLite's BEGIN IMMEDIATE waits there for the one writer).</summary>
    protected static async Task<(DbTransaction Transaction, TimeSpan Begun)> BeginTimedAsync(DbConnection connection, CancellationToken cancellationToken)
    {
        var beginning = System.Diagnostics.Stopwatch.GetTimestamp();
        var transaction = await connection.BeginTransactionAsync(cancellationToken).ConfigureAwait(false);
        return (transaction, System.Diagnostics.Stopwatch.GetElapsedTime(beginning));
    }

    internal static DbParameter AddParameter(DbCommand command, string name, DbType type, int size = 0)
    {
        var parameter = command.CreateParameter();
        parameter.ParameterName = name;
        parameter.DbType = type;
        if (size != 0)
            parameter.Size = size; // -1: no limit (SQL Server's varbinary(max) and nvarchar(max))
        command.Parameters.Add(parameter);
        return parameter;
    }

    /// <summary>
    /// Where a connection string leads — its host, port, database and user, nothing else — for log messages: an allow-list, so that
    /// a secret under a name this does not know (Npgsql's PSW or SSL Password, a key file's passphrase) is never printed.
    /// </summary>
    public string Describe(string connectionString)
    {
        var given = new DbConnectionStringBuilder { ConnectionString = connectionString };
        var described = new DbConnectionStringBuilder();
        foreach (string key in given.Keys)
            if (DescribedKeys.Contains(key))
                described[key] = given[key];
        return described.ConnectionString;
    }

    private static readonly HashSet<string> DescribedKeys = new(StringComparer.OrdinalIgnoreCase)
    {
        "Host", "Server", "Data Source", "DataSource", "Port", "Database", "Initial Catalog", "Username", "User Name", "User Id", "UserId", "User",
        "Uid", "Mode",
    };
}
