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
    [DataRow("127.0.0.1")]
    [DataRow("198.18.0.1")]
    public void The_private_redis_server_keeps_protected_mode_and_with_credentials_turns_the_default_user_off(string bindAddress)
    {
        using var folder = new TempDirectory("it-redis-conf-");
        var credentials = IntegrationTasks.Queues.BrokerCredentials.ForBroker("Redis", bindAddress, Path.Combine(folder, "Redis.json"))!;
        var open = RedisServerProcess.Configuration(new RedisServerOptions { Directory = "/tmp/unused", BindAddress = bindAddress }).Split('\n');
        var closed = RedisServerProcess.Configuration(new RedisServerOptions { Directory = "/tmp/unused", BindAddress = bindAddress, Credentials = credentials }).Split('\n');
        Assert.AreEqual("protected-mode yes", open.Single(l => l.StartsWith("protected-mode ", StringComparison.Ordinal)).Trim());
        Assert.AreEqual("protected-mode yes", closed.Single(l => l.StartsWith("protected-mode ", StringComparison.Ordinal)).Trim());
        Assert.IsFalse(open.Any(l => l.StartsWith("user ", StringComparison.Ordinal)));
        CollectionAssert.AreEqual(new[] { "default", "off", "resetpass" }, closed.Single(l => l.StartsWith("user default ", StringComparison.Ordinal)).Split(' ')[1..4]);
        var user = closed.Single(l => l.StartsWith($"user {credentials.UserName} ", StringComparison.Ordinal)).Split(' ');
        Assert.AreEqual("#" + Convert.ToHexStringLower(System.Security.Cryptography.SHA256.HashData(System.Text.Encoding.UTF8.GetBytes(credentials.Password))), user[3]);
        Assert.IsFalse(closed.Any(l => l.Contains(credentials.Password, StringComparison.Ordinal)));
    }

    [TestMethod]
    public void The_brokers_memory_and_store_are_bounded_and_a_full_one_refuses_rather_than_drops()
    {
        var redis = RedisServerProcess.Configuration(new RedisServerOptions { Directory = "/tmp/unused", MaxMemoryBytes = 300_000_000 }).Split('\n').Select(l => l.Trim()).ToList();
        var nats = IntegrationTasks.Queues.Nats.NatsServerProcess.Configuration(new IntegrationTasks.Queues.Nats.NatsServerOptions { Directory = "/tmp/unused", MaxStoreBytes = 400_000_000 })
            .Split('\n').Select(l => l.Trim()).ToList();

        Assert.AreEqual(("maxmemory 300000000", "maxmemory-policy noeviction", "max_file_store: 400000000"),
            (redis.Single(l => l.StartsWith("maxmemory ", StringComparison.Ordinal)), redis.Single(l => l.StartsWith("maxmemory-policy", StringComparison.Ordinal)),
             nats.Single(l => l.StartsWith("max_file_store", StringComparison.Ordinal))));
    }
}
