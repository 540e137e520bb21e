namespace IntegrationTasks.Tests;

[TestClass]
public static class AssemblyLifetime
{
    [AssemblyCleanup]
    public static void StopServers()
    {
        TestBroker.StopIfStarted();
        TestNats.StopIfStarted();
        TestRedis.StopIfStarted();
        DatabaseServer.Postgres.StopIfStarted();
        DatabaseServer.MariaDb.StopIfStarted();
    }
}
