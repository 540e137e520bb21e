namespace IntegrationTasks.Tests;

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
