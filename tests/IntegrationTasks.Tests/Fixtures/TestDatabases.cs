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
    public static async Task<TestDatabases> PostgresAsync()
    {
        var admin = DatabaseServer.Postgres.AdminConnectionString;
        var suffix = Guid.NewGuid().ToString("N")[..12];
        string[] names = [$"it_server_{suffix}", $"it_client_{suffix}"];
        await using (var connection = new NpgsqlConnection(admin))
        {
            await connection.OpenAsync();
            foreach (var name in names)
            {
                await using var command = new NpgsqlCommand($"CREATE DATABASE {name}", connection);
                await command.ExecuteNonQueryAsync();
            }
        }
        string For(string name) => new NpgsqlConnectionStringBuilder(admin) { Database = name }.ConnectionString;
        return new TestDatabases(
            Database.Create(DatabaseProvider.PostgreSql, For(names[0])),
            Database.Create(DatabaseProvider.PostgreSql, For(names[1])),
            "PostgreSql",
            async () =>
            {
                NpgsqlConnection.ClearAllPools();
                await using var connection = new NpgsqlConnection(admin);
                await connection.OpenAsync();
                foreach (var name in names)
                {
                    await using var command = new NpgsqlCommand($"DROP DATABASE IF EXISTS {name} WITH (FORCE)", connection);
                    await command.ExecuteNonQueryAsync();
                }
            });
    }

    /// <summary>Two fresh databases (server and client) on the test server, utf8mb4 throughout.</summary>
    public static async Task<TestDatabases> MariaDbAsync()
    {
        var admin = DatabaseServer.MariaDb.AdminConnectionString;
        var suffix = Guid.NewGuid().ToString("N")[..12];
        string[] names = [$"it_server_{suffix}", $"it_client_{suffix}"];
        await using (var connection = new MySqlConnection(admin))
        {
            await connection.OpenAsync();
            foreach (var name in names)
            {
                await using var command = new MySqlCommand($"CREATE DATABASE {name} CHARACTER SET utf8mb4 COLLATE utf8mb4_bin", connection);
                await command.ExecuteNonQueryAsync();
            }
        }
        string For(string name) => new MySqlConnectionStringBuilder(admin) { Database = name }.ConnectionString;
        return new TestDatabases(
            Database.Create(DatabaseProvider.MariaDb, For(names[0])),
            Database.Create(DatabaseProvider.MariaDb, For(names[1])),
            "MariaDb",
            async () =>
            {
                await MySqlConnection.ClearAllPoolsAsync();
                await using var connection = new MySqlConnection(admin);
                await connection.OpenAsync();
                foreach (var name in names)
                {
                    await using var command = new MySqlCommand($"DROP DATABASE IF EXISTS {name}", connection);
                    await command.ExecuteNonQueryAsync();
                }
            });
    }

    public ValueTask DisposeAsync() => new(_cleanup());
}
