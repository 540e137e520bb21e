namespace IntegrationTasks.Tests;

/// <summary>A NATS or Redis client over its server's connection or memory limit is refused with IT3008 (as RabbitMQ's is), not a connection error.</summary>
[TestClass]
[TestCategory("EndToEnd")]
public sealed class BrokerLimitTests
{
    [TestMethod]
    public async Task A_NATS_client_over_the_servers_max_connections_is_refused_with_IT3008()
    {
        using var folder = new TempDirectory("it-nats-limit-");
        using var broker = TestNats.Start(folder, maxConnections: 1);
        try
        {
            // The one place is taken.
            await using var holder = new NATS.Client.Core.NatsConnection(new NATS.Client.Core.NatsOpts { Url = broker.Options.Url });
            await holder.ConnectAsync();
            await using var databases = TestDatabases.Sqlite();
            var engine = new FakeBuildEngine();
            var client = new NatsClient { NatsUrl = broker.Options.Url }.For(databases, engine, totalBatches: 2, batchSize: 100);
            Assert.IsFalse(await Task.Run(client.Execute), engine.Log);
            CollectionAssert.AreEqual(new[] { ErrorCodes.ServerBusy }, engine.Errors.Select(e => e.Code).ToArray(), engine.Log);
        }
        finally
        {
            await broker.StopAsync(CancellationToken.None);
        }
    }

    [TestMethod]
    public async Task A_Redis_client_over_the_servers_maxclients_is_refused_with_IT3008()
    {
        using var folder = new TempDirectory("it-redis-limit-");
        using var broker = TestRedis.Start(folder, maxClients: 2);
        try
        {
            // StackExchange.Redis holds two connections a multiplexer (commands, subscriptions): the two places are taken.
            using var holder = await RedisConnections.ConnectAsync(broker.Options.Endpoint, "holder", null, CancellationToken.None);
            await using var databases = TestDatabases.Sqlite();
            var engine = new FakeBuildEngine();
            var client = new RedisStreams { RedisEndpoint = broker.Options.Endpoint }.For(databases, engine, totalBatches: 2, batchSize: 100);
            Assert.IsFalse(await Task.Run(client.Execute), engine.Log);
            CollectionAssert.AreEqual(new[] { ErrorCodes.ServerBusy }, engine.Errors.Select(e => e.Code).ToArray(), engine.Log);
        }
        finally
        {
            await broker.StopAsync(CancellationToken.None);
        }
    }

    [TestMethod]
    public async Task Redis_at_its_memory_limit_refuses_a_client_with_IT3008_and_drops_nothing_it_holds()
    {
        using var folder = new TempDirectory("it-redis-memory-");
        using var broker = TestRedis.Start(folder, maxMemoryBytes: 64L * 1024 * 1024);
        try
        {
            await using var databases = await TransferChecks.WithRecordsAsync("Sqlite", 200);
            await using var server = await RunningRedisServer.StartAsync(databases.Server, broker.Options.Endpoint);
            // Someone else's stream fills Redis to its maxmemory (large entries, then small ones to the last byte): every write after
            // is refused, nothing evicted. The filler stays connected, so that nothing it holds is freed meanwhile.
            using var filler = await RedisConnections.ConnectAsync(broker.Options.Endpoint, "filler", null, CancellationToken.None);
            var db = filler.GetDatabase();
            foreach (var size in new[] { 1024 * 1024, 4096 })
            {
                var chunk = new byte[size];
                var refused = false;
                for (var i = 0; i < 100_000 && !refused; i++)
                {
                    try
                    {
                        await db.StreamAddAsync("filler", "chunk", chunk);
                    }
                    catch (StackExchange.Redis.RedisServerException e) when (RedisConnections.IsFull(e))
                    {
                        refused = true;
                    }
                }
                Assert.IsTrue(refused, $"Redis refused a write of {size} bytes at its maxmemory");
            }
            var held = await db.StreamLengthAsync("filler");
            Assert.IsGreaterThan(0L, held);
            // Full, but not to the byte: buffers freed since the last refusal leave room for a small write or two. The limit set
            // below what Redis holds now leaves none (noeviction: nothing it holds goes), so the client meets a full Redis every time.
            var limit = RepositoryPaths.Run("redis-cli", ["-h", broker.Options.BindAddress, "-p", broker.Options.Port.ToString(System.Globalization.CultureInfo.InvariantCulture),
                "CONFIG", "SET", "maxmemory", "1mb"]);
            Assert.AreEqual((0, "OK"), (limit.ExitCode, limit.Stdout.Trim()), limit.Stderr);
            var engine = new FakeBuildEngine();
            var client = new RedisStreams { RedisEndpoint = broker.Options.Endpoint }.For(databases, engine, totalBatches: 2, batchSize: 100);
            Assert.IsFalse(await Task.Run(client.Execute), engine.Log);
            Assert.AreEqual((ErrorCodes.ServerBusy, 0L), (engine.Errors.First().Code, client.Records), engine.Log);
            Assert.AreEqual(held, await db.StreamLengthAsync("filler"), "nothing evicted");
        }
        finally
        {
            await broker.StopAsync(CancellationToken.None);
        }
    }
}
