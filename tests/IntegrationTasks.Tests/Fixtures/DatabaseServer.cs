namespace IntegrationTasks.Tests;

/// <summary>
/// A database server the tests use: the connection string in <paramref name="variable"/> when the test command set it, otherwise
/// the repository's <paramref name="script"/> starts a private server on loopback when a test first asks (and it is stopped after
/// the run, unless it was running before).
/// </summary>
internal sealed class DatabaseServer(string script, string variable)
{
    public static readonly DatabaseServer Postgres = new("scripts/postgres.sh", "IT_PG_CONNSTRING");
    public static readonly DatabaseServer MariaDb = new("scripts/mariadb.sh", "IT_MARIADB_CONNSTRING");

    private readonly Lazy<(string Connection, bool Started)> _server = new(() => Start(script, variable));

    private static (string, bool) Start(string script, string variable)
    {
        if (Environment.GetEnvironmentVariable(variable) is { Length: > 0 } given)
            return (given, false);
        var wasRunning = RepositoryPaths.Run("bash", [Path.Combine(RepositoryPaths.Root, script), "status"]).ExitCode == 0;
        return (RepositoryPaths.RunScript(script, "start").Trim().Split('\n')[^1], !wasRunning);
    }

    public string AdminConnectionString => _server.Value.Connection;

    public void StopIfStarted()
    {
        if (_server.IsValueCreated && _server.Value.Started)
            RepositoryPaths.RunScript(script, "stop");
    }
}
