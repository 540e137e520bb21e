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

/// <summary>What every transport's "moves every row" test does around its own server and client.</summary>
internal static class TransferChecks
{
    /// <summary>Databases of <paramref name="provider"/> (SQLite, or the suite's PostgreSQL) with <paramref name="records"/> rows in ServiceTable.</summary>
    public static async Task<TestDatabases> WithRecordsAsync(string provider, int records)
    {
        var databases = await TestDatabases.CreateAsync(provider);
        try
        {
            await new DataGenerator(databases.Server, NullEventLog.Instance).GenerateAsync(records, CancellationToken.None);
            return databases;
        }
        catch
        {
            await databases.DisposeAsync();
            throw;
        }
    }

    /// <summary>Starts a server on databases holding <paramref name="records"/> and runs a client against it that must move every row.</summary>
    public static async Task<TClient> AssertServedEveryRowAsync<TServer, TClient>(string provider, int records, Func<TestDatabases, Task<TServer>> startServer,
        Func<TServer, TestDatabases, FakeBuildEngine, TClient> client) where TServer : IAsyncDisposable where TClient : IntegrationTasks.Transfer.TransferClientTask
    {
        await using var databases = await WithRecordsAsync(provider, records);
        await using var server = await startServer(databases);
        var engine = new FakeBuildEngine();
        var started = client(server, databases, engine);
        await started.AssertMovesEveryRowAsync(engine, databases, records);
        return started;
    }

    /// <summary>Runs the client to its end: it succeeds, moves <paramref name="records"/>, and every row is in ClientTable once, equal to ServiceTable's.</summary>
    public static async Task AssertMovesEveryRowAsync(this IntegrationTasks.Transfer.TransferClientTask client, FakeBuildEngine engine, TestDatabases databases,
        int records)
    {
        Assert.IsTrue(await Task.Run(client.Execute), engine.Log);
        Assert.AreEqual(records, client.Records);
        var report = await new TransferVerifier(databases.Server, databases.Client).VerifyAsync(records, CancellationToken.None);
        Assert.IsTrue(report.Success, report.ToString()); // none missing, twice, extra or altered
        Assert.AreEqual(records, report.Matched);
    }
}
