using System.Data.Common;

namespace IntegrationTasks.Data;

/// <summary>One side's database: a provider and a connection string, and the dialect that goes with them.</summary>
public sealed class Database
{
    private Database(DatabaseProvider provider, string connectionString, SqlDialect dialect)
    {
        Provider = provider;
        ConnectionString = connectionString;
        Dialect = dialect;
    }

    public DatabaseProvider Provider { get; }
    public string ConnectionString { get; }
    internal SqlDialect Dialect { get; }

    public static Database Create(string? provider, string connectionString) =>
        Create(DatabaseProviders.Parse(provider), connectionString);

    public static Database Create(DatabaseProvider provider, string connectionString)
    {
        if (string.IsNullOrWhiteSpace(connectionString))
            throw new IntegrationException(ErrorCodes.InvalidParameter,
                $"The {provider} connection string is empty.");
        SqlDialect dialect = provider switch
        {
            DatabaseProvider.Sqlite => new SqliteDialect(),
            DatabaseProvider.PostgreSql => new PostgresDialect(),
            DatabaseProvider.MariaDb => new MariaDbDialect(),
            _ => new SqlServerDialect(),
        };
        try
        {
            // Parse now so that a malformed string fails here with a clear code, not mid-transfer.
            _ = dialect.CreateConnection(connectionString);
        }
        catch (ArgumentException e)
        {
            throw new IntegrationException(ErrorCodes.InvalidParameter,
                $"The {provider} connection string is not valid: {e.Message}", e);
        }
        return new Database(provider, connectionString, dialect);
    }

    /// <summary>Opens a connection, creating a SQLite file's folder first and applying per-connection settings.</summary>
    public Task<DbConnection> OpenAsync(CancellationToken cancellationToken) => OpenAsync(cancellationToken, forBatchInserts: false);

    /// <param name="forBatchInserts">A connection that inserts batches (<see cref="SqlDialect.CreateWriterConnection"/>).</param>
    public async Task<DbConnection> OpenAsync(CancellationToken cancellationToken, bool forBatchInserts)
    {
        var connection = forBatchInserts ? Dialect.CreateWriterConnection(ConnectionString) : Dialect.CreateConnection(ConnectionString);
        try
        {
            await Dialect.PrepareTargetAsync(connection, cancellationToken).ConfigureAwait(false);
            await connection.OpenAsync(cancellationToken).ConfigureAwait(false);
            await Dialect.ConfigureAsync(connection, cancellationToken).ConfigureAwait(false);
            return connection;
        }
        catch (Exception e) when (e is DbException or InvalidOperationException or IOException)
        {
            await connection.DisposeAsync().ConfigureAwait(false);
            throw new IntegrationException(ErrorCodes.DatabaseFailure,
                $"Cannot open the {Provider} database ({Describe()}): {e.Message}", e);
        }
    }

    /// <summary>Creates both tables of the series if they do not exist yet.</summary>
    public async Task EnsureSchemaAsync(CancellationToken cancellationToken)
    {
        await using var connection = await OpenAsync(cancellationToken).ConfigureAwait(false);
        foreach (var table in new[] { RecordTable.Service, RecordTable.Client })
            await CreateTableAsync(connection, table, cancellationToken).ConfigureAwait(false);
    }

    /// <summary>Creates a table, or adds the payload columns to one made before they existed.</summary>
    private async Task CreateTableAsync(DbConnection connection, RecordTable table, CancellationToken cancellationToken)
    {
        await ExecuteAsync(connection, Dialect.CreateTableSql(table), cancellationToken).ConfigureAwait(false);
        // The table's columns as the database names them (PostgreSQL folds them to lower case); no rows are read.
        await using var probe = connection.CreateCommand();
        probe.CommandText = $"SELECT * FROM {table.Name} WHERE 1 = 0";
        bool hasPayload;
        await using (var reader = await probe.ExecuteReaderAsync(cancellationToken).ConfigureAwait(false))
            hasPayload = Enumerable.Range(0, reader.FieldCount).Any(i => string.Equals(reader.GetName(i), "Payload", StringComparison.OrdinalIgnoreCase));
        if (!hasPayload)
            await ExecuteAsync(connection, Dialect.AddPayloadColumnsSql(table), cancellationToken).ConfigureAwait(false);
    }

    /// <summary>Removes every row of a table (the series' EmptyClientTable).</summary>
    public async Task EmptyAsync(RecordTable table, CancellationToken cancellationToken)
    {
        await using var connection = await OpenAsync(cancellationToken).ConfigureAwait(false);
        await CreateTableAsync(connection, table, cancellationToken).ConfigureAwait(false);
        await ExecuteAsync(connection, Dialect.EmptyTableSql(table), cancellationToken).ConfigureAwait(false);
    }

    /// <summary>Drops a table if it is there (a scratch table of the calibration; never the series' two).</summary>
    public async Task DropAsync(RecordTable table, CancellationToken cancellationToken)
    {
        if (table == RecordTable.Service || table == RecordTable.Client)
            throw new ArgumentException($"{table.Name} is one of the series' tables; it is emptied, never dropped.", nameof(table));
        await using var connection = await OpenAsync(cancellationToken).ConfigureAwait(false);
        await ExecuteAsync(connection, $"DROP TABLE IF EXISTS {table.Name}", cancellationToken).ConfigureAwait(false);
    }

    /// <summary>Leaves a table just filled settled (the provider's maintenance done now, not during the runs); true when there was any.</summary>
    public async Task<bool> SettleAsync(RecordTable table, CancellationToken cancellationToken)
    {
        if (Dialect.SettleTableSql(table) is not { } sql)
            return false;
        await using var connection = await OpenAsync(cancellationToken).ConfigureAwait(false);
        await ExecuteAsync(connection, sql, cancellationToken).ConfigureAwait(false);
        return true;
    }

    public async Task<long> CountAsync(RecordTable table, CancellationToken cancellationToken)
    {
        await using var connection = await OpenAsync(cancellationToken).ConfigureAwait(false);
        await using var command = connection.CreateCommand();
        command.CommandText = $"SELECT COUNT(*) FROM {table.Name}";
        return Convert.ToInt64(await command.ExecuteScalarAsync(cancellationToken).ConfigureAwait(false));
    }

    /// <summary>The connection string without secrets, for messages.</summary>
    public string Describe() => Dialect.Describe(ConnectionString);

    internal static async Task ExecuteAsync(DbConnection connection, string sql, CancellationToken cancellationToken, DbTransaction? transaction = null)
    {
        await using var command = connection.CreateCommand();
        command.Transaction = transaction;
        command.CommandText = sql;
        command.CommandTimeout = 0;
        await command.ExecuteNonQueryAsync(cancellationToken).ConfigureAwait(false);
    }
}
