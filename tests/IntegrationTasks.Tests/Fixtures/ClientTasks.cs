namespace IntegrationTasks.Tests;

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
