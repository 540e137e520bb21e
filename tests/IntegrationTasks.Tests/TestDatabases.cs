using System.Diagnostics;
using IntegrationTasks.Data;
using Npgsql;

namespace IntegrationTasks.Tests;

/// <summary>A server and a client database for one test, on SQLite files or a fresh PostgreSQL database.</summary>
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

    public static Task<TestDatabases> CreateAsync(string provider) =>
        provider == "PostgreSql" ? PostgresAsync() : Task.FromResult(Sqlite());

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
        var admin = PostgresCluster.AdminConnectionString;
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

    public ValueTask DisposeAsync() => new(_cleanup());
}

/// <summary>
/// The PostgreSQL the tests use: IT_PG_CONNSTRING when the test command set it, otherwise the
/// repository's scripts/postgres.sh starts a private cluster on loopback (and it is stopped after the run).
/// </summary>
internal static class PostgresCluster
{
    private static readonly Lazy<(string Connection, bool Started)> Cluster = new(Start);

    public static string AdminConnectionString => Cluster.Value.Connection;

    private static (string, bool) Start()
    {
        if (Environment.GetEnvironmentVariable("IT_PG_CONNSTRING") is { Length: > 0 } given)
            return (given, false);
        var output = RepositoryPaths.RunScript("scripts/postgres.sh", "start");
        return (output.Trim().Split('\n')[^1], true);
    }

    public static void StopIfStarted()
    {
        if (Cluster.IsValueCreated && Cluster.Value.Started)
            RepositoryPaths.RunScript("scripts/postgres.sh", "stop");
    }
}

internal static class ClientTasks
{
    /// <summary>The settings every client task of the tests shares: engine, client database, batches, timeout.</summary>
    public static T For<T>(this T client, TestDatabases databases, FakeBuildEngine engine, int totalBatches, int batchSize,
        int timeoutSeconds = 120) where T : IntegrationTasks.Transfer.TransferClientTask
    {
        client.BuildEngine = engine;
        client.ClientProvider = databases.ProviderName;
        client.ClientConnString = databases.Client.ConnectionString;
        client.TotalBatches = totalBatches;
        client.BatchSize = batchSize;
        client.TimeoutSeconds = timeoutSeconds;
        return client;
    }
}

internal static class RepositoryPaths
{
    public static string Root { get; } = FindRoot();

    public static string BuildProject => Path.Combine(Root, "build.proj");

    private static string FindRoot()
    {
        for (var dir = new DirectoryInfo(AppContext.BaseDirectory); dir is not null; dir = dir.Parent)
        {
            if (File.Exists(Path.Combine(dir.FullName, "build.proj")))
                return dir.FullName;
        }
        throw new InvalidOperationException("build.proj not found above the test assembly.");
    }

    public static string RunScript(string script, string argument)
    {
        var (exitCode, stdout, stderr) = Run("bash", [Path.Combine(Root, script), argument]);
        if (exitCode != 0)
            throw new InvalidOperationException($"{script} {argument} failed ({exitCode}): {stderr}");
        return stdout;
    }

    /// <summary>Runs a command from the repository root; five minutes at most, then its tree is killed.</summary>
    public static (int ExitCode, string Stdout, string Stderr) Run(string fileName, IEnumerable<string> arguments,
        IReadOnlyDictionary<string, string?>? environment = null)
    {
        var info = new ProcessStartInfo(fileName) { RedirectStandardOutput = true, RedirectStandardError = true, WorkingDirectory = Root };
        foreach (var argument in arguments)
            info.ArgumentList.Add(argument);
        foreach (var (name, value) in environment ?? new Dictionary<string, string?>())
        {
            if (value is null)
                info.Environment.Remove(name); // not inherited
            else
                info.Environment[name] = value;
        }
        using var process = Process.Start(info)!;
        var stdout = process.StandardOutput.ReadToEndAsync();
        var stderr = process.StandardError.ReadToEndAsync();
        if (!process.WaitForExit(TimeSpan.FromMinutes(5)))
        {
            process.Kill(entireProcessTree: true);
            throw new TimeoutException($"{fileName} {string.Join(' ', arguments)} did not finish within 5 minutes:\n{stdout.Result}");
        }
        return (process.ExitCode, stdout.Result, stderr.Result);
    }
}

/// <summary>A directory of its own for one test, removed with everything in it when the test ends (`using var`).</summary>
internal sealed class TempDirectory(string prefix) : IDisposable
{
    public string Path { get; } = Directory.CreateTempSubdirectory(prefix).FullName;

    public static implicit operator string(TempDirectory directory) => directory.Path;

    public override string ToString() => Path;

    public void Dispose()
    {
        // A process that is ending (a server, the broker) may still write a last file: try again briefly.
        for (var attempt = 1; attempt <= 5 && Directory.Exists(Path); attempt++)
        {
            try
            {
                Directory.Delete(Path, recursive: true);
            }
            catch (Exception e) when (e is IOException or UnauthorizedAccessException && attempt < 5)
            {
                Thread.Sleep(200 * attempt);
            }
            catch (Exception e) when (e is IOException or UnauthorizedAccessException)
            {
                return; // the system's temporary-file cleanup takes the rest
            }
        }
    }
}

internal static class Processes
{
    /// <summary>Every process's command line, to find what a test's code left running.</summary>
    public static string AllCommandLines() => string.Join("\n", Directory.EnumerateDirectories("/proc")
        .Where(d => int.TryParse(Path.GetFileName(d), out _))
        .Select(d => { try { return File.ReadAllText(Path.Combine(d, "cmdline")).Replace('\0', ' '); } catch (IOException) { return ""; } }));
}

[TestClass]
public static class AssemblyLifetime
{
    [AssemblyCleanup]
    public static void StopServers()
    {
        TestBroker.StopIfStarted();
        PostgresCluster.StopIfStarted();
    }
}
