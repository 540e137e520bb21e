using IntegrationTasks.Queues.Nats;
using IntegrationTasks.Queues.Redis;

namespace IntegrationTasks.Tests;

/// <summary>A NATS or Redis client over its server's connection limit is refused with IT3008 (as RabbitMQ's is), not a connection error.</summary>
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
}
