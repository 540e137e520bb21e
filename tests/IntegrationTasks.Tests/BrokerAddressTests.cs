using IntegrationTasks.Queues.Nats;
using IntegrationTasks.Queues.Redis;

namespace IntegrationTasks.Tests;

/// <summary>Where a NATS or Redis transport connects, as given by hand (NatsUrl, RedisEndpoint): a malformed one is refused with its code.</summary>
[TestClass]
[TestCategory("Unit")]
public sealed class BrokerAddressTests
{
    [TestMethod]
    [DataRow("nats://127.0.0.1:4222", true)]
    [DataRow("nats://a.example:4222,nats://b.example:4222", true)]
    [DataRow("tls://nats.example:4443", true)]
    [DataRow("127.0.0.1:4222", false)]
    [DataRow("http://127.0.0.1:4222", false)]
    [DataRow("nats://", false)]
    [DataRow("", false)]
    public void A_NATS_url_is_taken_only_with_a_NATS_scheme_and_a_host(string url, bool taken)
    {
        if (taken)
            Assert.AreEqual(url, NatsConnections.CheckedUrl(url));
        else
            Assert.AreEqual(ErrorCodes.InvalidParameter, Assert.ThrowsExactly<IntegrationException>(() => NatsConnections.CheckedUrl(url)).Code);
    }

    [TestMethod]
    [DataRow("127.0.0.1:6380", true)]
    [DataRow("redis.example:6379", true)]
    [DataRow("[::1]:6380", true)]
    [DataRow("127.0.0.1", false)]
    [DataRow("127.0.0.1:0", false)]
    [DataRow("127.0.0.1:70000", false)]
    [DataRow(":6380", false)]
    [DataRow("redis://127.0.0.1:6380", false)]
    public void A_Redis_endpoint_is_taken_only_as_host_and_port(string endpoint, bool taken)
    {
        if (taken)
            Assert.AreEqual(endpoint, RedisConnections.CheckedEndpoint(endpoint));
        else
            Assert.AreEqual(ErrorCodes.InvalidParameter, Assert.ThrowsExactly<IntegrationException>(() => RedisConnections.CheckedEndpoint(endpoint)).Code);
    }

    [TestMethod]
    public async Task A_client_given_a_malformed_address_fails_with_IT1001_and_moves_nothing()
    {
        await using var databases = TestDatabases.Sqlite();
        foreach (var task in new TransferClientTask[]
                 {
                     new NatsClient { NatsUrl = "127.0.0.1:4222" }, new NatsJetStream { NatsUrl = "http://127.0.0.1:4222" },
                     new RedisStreams { RedisEndpoint = "127.0.0.1" },
                 })
        {
            var engine = new FakeBuildEngine();
            task.For(databases, engine, totalBatches: 2, batchSize: 10);
            Assert.IsFalse(task.Execute(), engine.Log);
            CollectionAssert.AreEqual(new[] { ErrorCodes.InvalidParameter }, engine.Errors.Select(e => e.Code).ToArray(), engine.Log);
        }
    }

    [TestMethod]
    [DataRow("127.0.0.1", "yes")]
    [DataRow("localhost", "yes")]
    [DataRow("198.18.0.1", "no")]
    public void The_private_redis_server_keeps_protected_mode_except_on_another_hosts_address(string bindAddress, string protectedMode)
    {
        var configuration = RedisServerProcess.Configuration(new RedisServerOptions { Directory = "/tmp/unused", BindAddress = bindAddress });
        Assert.AreEqual($"protected-mode {protectedMode}", configuration.Split('\n').Single(l => l.StartsWith("protected-mode ", StringComparison.Ordinal)).Trim());
    }
}
