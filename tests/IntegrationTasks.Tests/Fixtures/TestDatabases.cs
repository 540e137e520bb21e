using System.Data.Common;
using MySqlConnector;
using Npgsql;

namespace IntegrationTasks.Tests;

/// <summary>A server and a client database for one test, on SQLite files or fresh PostgreSQL or MariaDB databases.</summary>
internal sealed class TestDatabases : IAsyncDisposable
{
    private readonly Func<Task> _cleanup;

    private TestDatabases(Database server, Database client, string providerName, Func<Task> cleanup)
    {
        Server = server;
        Client = client;
        ProviderName = providerName;
        _cleanup = cleanup;
    }

    public Database Server { get; }
    public Database Client { get; }
    public string ProviderName { get; }

    public static Task<TestDatabases> CreateAsync(string provider) => provider switch
    {
        "PostgreSql" => PostgresAsync(),
        "MariaDb" => MariaDbAsync(),
        _ => Task.FromResult(Sqlite()),
    };

    public static TestDatabases Sqlite()
    {
        var folder = Directory.CreateTempSubdirectory("it-sqlite-").FullName;
        return new TestDatabases(
            Database.Create(DatabaseProvider.Sqlite, $"Data Source={folder}/server.db"),
            Database.Create(DatabaseProvider.Sqlite, $"Data Source={folder}/client.db"),
            "Sqlite",
            () =>
            {
                Microsoft.Data.Sqlite.SqliteConnection.ClearAllPools();
                Directory.Delete(folder, recursive: true);
                return Task.CompletedTask;
            });
    }

    /// <summary>Two fresh databases (server and client) in the test cluster.</summary>
    public static Task<TestDatabases> PostgresAsync()
    {
        var admin = DatabaseServer.Postgres.AdminConnectionString;
        return OnServerAsync(DatabaseProvider.PostgreSql, () => new NpgsqlConnection(admin),
            name => new NpgsqlConnectionStringBuilder(admin) { Database = name }.ConnectionString,
            name => $"CREATE DATABASE {name}", name => $"DROP DATABASE IF EXISTS {name} WITH (FORCE)",
            () =>
            {
                NpgsqlConnection.ClearAllPools();
                return Task.CompletedTask;
            });
    }

    /// <summary>Two fresh databases (server and client) on the test server, utf8mb4 throughout.</summary>
    public static Task<TestDatabases> MariaDbAsync()
    {
        var admin = DatabaseServer.MariaDb.AdminConnectionString;
        return OnServerAsync(DatabaseProvider.MariaDb, () => new MySqlConnection(admin),
            name => new MySqlConnectionStringBuilder(admin) { Database = name }.ConnectionString,
            name => $"CREATE DATABASE {name} CHARACTER SET utf8mb4 COLLATE utf8mb4_bin", name => $"DROP DATABASE IF EXISTS {name}",
            async () => await MySqlConnection.ClearAllPoolsAsync());
    }

    /// <summary>Two databases made on a server through its administrator's connection, and dropped again when disposed.</summary>
    private static async Task<TestDatabases> OnServerAsync(DatabaseProvider provider, Func<DbConnection> connectAdmin,
        Func<string, string> connectionStringFor, Func<string, string> createSql, Func<string, string> dropSql, Func<Task> clearPools)
    {
        var suffix = Guid.NewGuid().ToString("N")[..12];
        string[] names = [$"it_server_{suffix}", $"it_client_{suffix}"];
        await ExecuteEachAsync(names.Select(createSql));
        return new TestDatabases(
            Database.Create(provider, connectionStringFor(names[0])),
            Database.Create(provider, connectionStringFor(names[1])),
            provider.ToString(),
            async () =>
            {
                await clearPools();
                await ExecuteEachAsync(names.Select(dropSql));
            });

        async Task ExecuteEachAsync(IEnumerable<string> statements)
        {
            await using var connection = connectAdmin();
            await connection.OpenAsync();
            foreach (var sql in statements)
            {
                await using var command = connection.CreateCommand();
                command.CommandText = sql;
                await command.ExecuteNonQueryAsync();
            }
        }
    }

    public ValueTask DisposeAsync() => new(_cleanup());
}
