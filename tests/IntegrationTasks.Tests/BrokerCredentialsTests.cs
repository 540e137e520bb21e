namespace IntegrationTasks.Tests;

/// <summary>
/// The brokers behind a user of their own (BrokerCredentials): the credentials file made owner-only and kept, a client without
/// them or with a wrong password refused with IT3010, and the password in no log or report.
/// </summary>
[TestClass]
public sealed class BrokerCredentialsTests
{
    [TestMethod]
    [TestCategory("Unit")]
    [System.Runtime.Versioning.UnsupportedOSPlatform("windows")]
    public void The_credentials_file_is_made_owner_only_once_and_a_broker_beyond_loopback_needs_one()
    {
        using var folder = new TempDirectory("it-credentials-");
        var file = Path.Combine(folder, "creds", "Redis.json");
        var made = BrokerCredentials.ForBroker("Redis", "10.0.0.1", file)!;
        Assert.AreEqual(BrokerCredentials.GeneratedUserName, made.UserName);
        Assert.AreEqual(48, made.Password.Length);
        Assert.AreEqual(UnixFileMode.UserRead | UnixFileMode.UserWrite, File.GetUnixFileMode(file));
        Assert.AreEqual(UnixFileMode.UserRead | UnixFileMode.UserWrite | UnixFileMode.UserExecute, File.GetUnixFileMode(Path.GetDirectoryName(file)!));
        // Kept: the next start and every client read the same.
        Assert.AreEqual(made.Password, BrokerCredentials.ForBroker("Redis", "127.0.0.1", file)!.Password);
        Assert.AreEqual(made.Password, BrokerCredentials.Load(file)!.Password);
        Assert.DoesNotContain(made.Password, made.ToString());
        Assert.DoesNotContain(made.Password, BrokerOptions.For("127.0.0.1", 5673, file).ToString());

        Assert.IsNull(BrokerCredentials.ForBroker("Redis", "127.0.0.1", ""));
        Assert.IsNull(BrokerCredentials.ForBroker("Redis", "localhost", ""));
        Assert.IsNull(BrokerCredentials.Load(""));
        foreach (var beyond in new[] { "10.0.0.1", "0.0.0.0", "::", "broker.example" })
            Assert.AreEqual(ErrorCodes.InvalidParameter, Assert.ThrowsExactly<IntegrationException>(() => BrokerCredentials.ForBroker("Redis", beyond, "")).Code, beyond);
        Assert.AreEqual(ErrorCodes.InvalidParameter, Assert.ThrowsExactly<IntegrationException>(() => BrokerCredentials.Load(Path.Combine(folder, "none.json"))).Code);
        foreach (var (bad, name) in new[] { ("{\"user\": \"a b\", \"password\": \"x\"}", "space.json"), ("{\"user\": \"a\"}", "nopassword.json"), ("secret-not-json", "text.json") })
        {
            File.WriteAllText(Path.Combine(folder, name), bad);
            var refused = Assert.ThrowsExactly<IntegrationException>(() => BrokerCredentials.Load(Path.Combine(folder, name)));
            Assert.AreEqual(ErrorCodes.InvalidParameter, refused.Code, name);
            Assert.DoesNotContain("secret", refused.Message, "the file's text is never quoted");
        }
    }

    [TestMethod]
    [TestCategory("EndToEnd")]
    public async Task Redis_with_credentials_refuses_a_client_without_them_or_with_a_wrong_password_with_IT3010()
    {
        using var folder = new TempDirectory("it-redis-credentials-");
        var (good, wrong) = CredentialsFiles(folder);
        using var broker = await RedisServerProcess.StartAsync(new RedisServerOptions
        {
            Directory = Path.Combine(folder, "redis"), Port = TestPorts.Free(), Credentials = BrokerCredentials.Load(good),
        }, log: null, TimeSpan.FromSeconds(60), CancellationToken.None);
        try
        {
            await AssertRefusedAsync(file => new RedisStreams { RedisEndpoint = broker.Options.Endpoint, CredentialsFile = file }, wrong);
            // The user itself is let in.
            using var connection = await RedisConnections.ConnectAsync(broker.Options.Endpoint, "test", BrokerCredentials.Load(good), CancellationToken.None);
            Assert.AreEqual("PONG", (await connection.GetDatabase().ExecuteAsync("PING")).ToString());
            Assert.DoesNotContain(BrokerCredentials.Load(good)!.Password, File.ReadAllText(Path.Combine(folder, "redis", "redis.conf")), "only its hash");
        }
        finally
        {
            await broker.StopAsync(CancellationToken.None);
        }
    }

    [TestMethod]
    [TestCategory("EndToEnd")]
    [System.Runtime.Versioning.UnsupportedOSPlatform("windows")]
    public async Task NATS_with_credentials_refuses_a_client_without_them_or_with_a_wrong_password_with_IT3010()
    {
        using var folder = new TempDirectory("it-nats-credentials-");
        var (good, wrong) = CredentialsFiles(folder);
        using var broker = await NatsServerProcess.StartAsync(new NatsServerOptions
        {
            Directory = Path.Combine(folder, "nats"), Port = TestPorts.Free(), Credentials = BrokerCredentials.Load(good),
        }, log: null, TimeSpan.FromSeconds(60), CancellationToken.None);
        try
        {
            await AssertRefusedAsync(file => new NatsClient { NatsUrl = broker.Options.Url, CredentialsFile = file }, wrong);
            await AssertRefusedAsync(file => new NatsJetStream { NatsUrl = broker.Options.Url, CredentialsFile = file }, wrong);
            await using var connection = new NATS.Client.Core.NatsConnection(NatsConnections.ClientOptions(broker.Options.Url, "test", BrokerCredentials.Load(good)));
            await NatsConnections.ConnectAsync(connection, broker.Options.Url, BrokerCredentials.Load(good), CancellationToken.None);
            Assert.AreEqual(UnixFileMode.UserRead | UnixFileMode.UserWrite, File.GetUnixFileMode(Path.Combine(folder, "nats", "nats.conf")));
        }
        finally
        {
            await broker.StopAsync(CancellationToken.None);
        }
    }

    [TestMethod]
    [TestCategory("EndToEnd")]
    public async Task RabbitMQ_with_credentials_refuses_guest_and_a_wrong_password_with_IT3010()
    {
        using var folder = new TempDirectory("it-rabbitmq-credentials-");
        var (good, wrong) = CredentialsFiles(folder);
        using var node = await RabbitMqNode.StartAsync(new RabbitMqNodeOptions
        {
            Directory = Path.Combine(folder, "rabbitmq"), AmqpPort = TestPorts.Free(), DistributionPort = TestPorts.Free(), EpmdPort = TestPorts.Free(),
            Credentials = BrokerCredentials.Load(good),
        }, log: null, TimeSpan.FromSeconds(120), CancellationToken.None);
        try
        {
            // A node made with the suite's user has no guest at all, not even on loopback.
            await AssertRefusedAsync(file => new RabbitMQDurable { RabbitMQPort = node.Options.AmqpPort, CredentialsFile = file }, wrong);
            // AMQP 1.0 through the plugin, on the same port: the same users, and no anonymous login.
            await AssertRefusedAsync(file => new Amqp10Durable { RabbitMQPort = node.Options.AmqpPort, CredentialsFile = file }, wrong);
            var amqp10 = await Amqp10Connections.ConnectAsync(BrokerOptions.For("127.0.0.1", node.Options.AmqpPort, good), "test", CancellationToken.None);
            Assert.IsFalse(amqp10.IsClosed);
            await Amqp10Connections.CloseQuietlyAsync(amqp10);
            await using var connection = await BrokerOptions.For("127.0.0.1", node.Options.AmqpPort, good).ConnectAsync("test", CancellationToken.None);
            Assert.IsTrue(connection.IsOpen);
            Assert.DoesNotContain(BrokerCredentials.Load(good)!.Password, File.ReadAllText(Path.Combine(folder, "rabbitmq", "definitions.json")), "only its hash");
        }
        finally
        {
            await node.StopAsync(CancellationToken.None);
        }
        // The node's database outlives it: started again without credentials (a later loopback run), it takes guest from loopback.
        using var again = await RabbitMqNode.StartAsync(node.Options with { Credentials = null }, log: null, TimeSpan.FromSeconds(120), CancellationToken.None);
        try
        {
            await using var guest = await new BrokerOptions { Port = again.Options.AmqpPort }.ConnectAsync("test", CancellationToken.None);
            Assert.IsTrue(guest.IsOpen);
        }
        finally
        {
            await again.StopAsync(CancellationToken.None);
        }
    }

    [TestMethod]
    [TestCategory("EndToEnd")]
    [System.Runtime.Versioning.UnsupportedOSPlatform("windows")]
    public void RunAll_with_broker_credentials_moves_every_row_and_no_log_or_report_holds_a_password()
    {
        using var artifacts = new TempDirectory("it-credentials-runall-");
        var (exitCode, output) = HostingTests.RunBuild("RunAll", artifacts, "-p:Transports=RabbitMQDurable+NatsJetStream+RedisStreams+PipelinedCopy",
            "-p:BrokerCredentials=true", "-p:RecordCounts=2000", "-p:Repetitions=1", "-p:Warmup=false", "-p:BatchSize=500", "-p:Peers=false");
        Assert.AreEqual(0, exitCode, output);
        var runs = MeasurementLog.Read(Path.Combine(artifacts, "results", "runs.jsonl"));
        Assert.HasCount(4, runs, output);
        Assert.IsTrue(runs.All(r => r.Verified), output);
        var folder = Path.Combine(artifacts, "credentials");
        CollectionAssert.AreEquivalent(new[] { "NATS.json", "RabbitMQ.json", "Redis.json" }, Directory.GetFiles(folder).Select(Path.GetFileName).ToArray());
        var passwords = Directory.GetFiles(folder).Select(f => BrokerCredentials.Load(f)!.Password).ToList();
        Assert.AreEqual(3, passwords.Distinct().Count(), "a password a broker");
        foreach (var file in Directory.GetFiles(folder))
            Assert.AreEqual(UnixFileMode.UserRead | UnixFileMode.UserWrite, File.GetUnixFileMode(file), file);
        // Only the credentials and nats-server's own configuration (owner-only) hold a password; no log, result or report does.
        var natsConfiguration = Path.Combine(artifacts, "nats", "nats.conf");
        Assert.AreEqual(UnixFileMode.UserRead | UnixFileMode.UserWrite, File.GetUnixFileMode(natsConfiguration));
        foreach (var file in Directory.EnumerateFiles(artifacts, "*", SearchOption.AllDirectories)
                     .Where(f => !f.StartsWith(folder + "/", StringComparison.Ordinal) && f != natsConfiguration && new FileInfo(f).Length < 64 * 1024 * 1024))
        {
            var bytes = File.ReadAllBytes(file);
            foreach (var password in passwords)
                Assert.AreEqual(-1, bytes.AsSpan().IndexOf(System.Text.Encoding.UTF8.GetBytes(password)), file);
        }
        foreach (var password in passwords)
            Assert.DoesNotContain(password, output);
        StringAssert.EndsWith(ResultsJson.Load(Path.Combine(artifacts, "results")).Environment["BrokerCredentials"], "(CredentialsFolder)");
        HostingTests.AssertEndedCleanly(artifacts);
    }

    /// <summary>The broker's credentials (made as a broker's start makes them) and a file naming its user with another password.</summary>
    private static (string Good, string Wrong) CredentialsFiles(string folder)
    {
        var good = Path.Combine(folder, "credentials", "broker.json");
        BrokerCredentials.ForBroker("test", "127.0.0.1", good);
        var wrong = Path.Combine(folder, "credentials", "wrong.json");
        File.WriteAllText(wrong, $"{{\"user\": \"{BrokerCredentials.GeneratedUserName}\", \"password\": \"not-the-password\"}}");
        return (good, wrong);
    }

    /// <summary>The client without credentials, then with the wrong ones: each fails with IT3010 alone and moves nothing.</summary>
    private static async Task AssertRefusedAsync(Func<string, IntegrationTasks.Transfer.TransferClientTask> client, string wrong)
    {
        foreach (var file in new[] { "", wrong })
        {
            await using var databases = TestDatabases.Sqlite();
            var engine = new FakeBuildEngine();
            var task = client(file).For(databases, engine, totalBatches: 2, batchSize: 10);
            Assert.IsFalse(await Task.Run(task.Execute), engine.Log);
            CollectionAssert.AreEqual(new[] { ErrorCodes.CredentialsRefused }, engine.Errors.Select(e => e.Code).ToArray(), $"{task.GetType().Name} with '{file}': {engine.Log}");
            Assert.AreEqual(0, task.Records);
        }
    }
}
