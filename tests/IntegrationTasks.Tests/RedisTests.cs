using StackExchange.Redis;

namespace IntegrationTasks.Tests;

[TestClass]
[TestCategory("EndToEnd")]
public sealed class RedisTests
{
    [TestInitialize]
    public async Task EmptyStreams() => await TestRedis.FlushAsync();

    private static RedisStreams Client(TestDatabases databases, FakeBuildEngine engine, int totalBatches = 10, int batchSize = 200, string? endpoint = null)
    {
        var client = new RedisStreams { RedisEndpoint = endpoint ?? TestRedis.Endpoint, MaxInFlight = 4 };
        return client.For(databases, engine, totalBatches, batchSize);
    }

    [TestMethod]
    [DataRow("Sqlite")]
    [DataRow("PostgreSql")]
    public async Task Redis_Streams_move_every_row_intact(string provider)
    {
        await using var databases = await TransferChecks.WithRecordsAsync(provider, 2000);
        await using var server = await RunningRedisServer.StartAsync(databases.Server);
        var engine = new FakeBuildEngine();
        var client = Client(databases, engine);
        await client.AssertMovesEveryRowAsync(engine, databases, 2000);
        Assert.IsGreaterThan(2000L * 100, client.BytesReceived);
        // Nothing left behind: every request and reply was acknowledged and deleted.
        await using var connection = await ConnectionMultiplexer.ConnectAsync(TestRedis.Endpoint);
        var db = connection.GetDatabase();
        var replyStreams = connection.GetServers().Single().Keys(pattern: RedisStreamTopology.ReplyStreamPrefix + "*").ToList();
        Assert.AreEqual((0L, 0), (await db.StreamLengthAsync(RedisStreamTopology.RequestStream), replyStreams.Count));
    }

    [TestMethod]
    public async Task A_request_the_server_refuses_fails_its_client_with_the_servers_code_and_the_server_goes_on()
    {
        await using var databases = await TransferChecks.WithRecordsAsync("Sqlite", 1000);
        await using (var strict = await RunningRedisServer.StartAsync(databases.Server, maxMessageBytes: 40))
        {
            var engine = new FakeBuildEngine();
            Assert.IsFalse(await Task.Run(Client(databases, engine, 5, 200).Execute), engine.Log);
            Assert.IsTrue(engine.HasErrorCode(ErrorCodes.FrameTooLarge), engine.Log);
            Assert.IsTrue(strict.Log.Lines.Any(l => l.StartsWith($"warning {ErrorCodes.FrameTooLarge}", StringComparison.Ordinal)), string.Join("\n", strict.Log.Lines));
        }
        await TestRedis.FlushAsync();
        await databases.Client.EmptyAsync(RecordTable.Client, CancellationToken.None);

        // A request that is not XML: refused with its code on the reply stream, and the same server answers the next client in full.
        await using var server = await RunningRedisServer.StartAsync(databases.Server);
        await using (var connection = await ConnectionMultiplexer.ConnectAsync(TestRedis.Endpoint))
        {
            var db = connection.GetDatabase();
            const string replies = "integrationtasks:replies:test";
            await db.StreamAddAsync(RedisStreamTopology.RequestStream, [new(RedisStreamTopology.BatchField, "0"), new(RedisStreamTopology.RequestIdField, "test.0.0"),
                new(RedisStreamTopology.ReplyToField, replies), new(RedisStreamTopology.BodyField, "not xml at all")]);
            await Eventually.WaitUntilAsync(async () => await db.StreamLengthAsync(replies) == 1, "a reply to the bad request");
            var refusal = RedisStreamTopology.Field((await db.StreamRangeAsync(replies))[0], RedisStreamTopology.ErrorField).ToString();
            StringAssert.StartsWith(refusal, $"{ErrorCodes.MalformedXml}: ");
        }
        var client = Client(databases, new FakeBuildEngine(), 5, 200);
        Assert.IsTrue(await Task.Run(client.Execute));
        Assert.AreEqual(1000, (await new TransferVerifier(databases.Server, databases.Client).VerifyAsync(1000, CancellationToken.None)).Matched);
    }

    [TestMethod]
    public async Task A_client_killed_mid_transfer_resumes_and_ends_with_every_row_once()
    {
        await using var databases = TestDatabases.Sqlite();
        const int batches = 200, batchSize = 250;
        await new DataGenerator(databases.Server, NullEventLog.Instance).GenerateAsync(batches * batchSize, CancellationToken.None);
        await databases.Client.EnsureSchemaAsync(CancellationToken.None); // the test watches ClientTable fill up
        await using var server = await RunningRedisServer.StartAsync(databases.Server);
        await KilledProcesses.KillClientAfterTenBatchesAsync("RedisStreams", databases, batches, batchSize, $"-p:RedisEndpoint={TestRedis.Endpoint}");

        var engine = new FakeBuildEngine();
        Assert.IsTrue(await Task.Run(Client(databases, engine, batches, batchSize).Execute), engine.Log);
        Assert.IsTrue(engine.Messages.Any(m => m.Message?.Contains("resuming with the rest", StringComparison.Ordinal) == true), engine.Log);
        Assert.AreEqual(batches * batchSize, (await new TransferVerifier(databases.Server, databases.Client).VerifyAsync(batches * batchSize, CancellationToken.None)).Matched);
    }

    [TestMethod]
    public async Task A_transfer_survives_its_server_being_killed_mid_transfer()
    {
        await using var databases = TestDatabases.Sqlite();
        const int batches = 200, batchSize = 250;
        await new DataGenerator(databases.Server, NullEventLog.Instance).GenerateAsync(batches * batchSize, CancellationToken.None);
        await databases.Client.EnsureSchemaAsync(CancellationToken.None);
        var engine = new FakeBuildEngine();
        using var artifacts = new TempDirectory("it-redis-");
        var first = KilledProcesses.StartServer(engine, "RedisStreamsServer", databases, artifacts, ("RedisEndpoint", TestRedis.Endpoint));
        var client = Client(databases, engine, batches, batchSize);
        var transfer = Task.Run(client.Execute);
        await Eventually.WaitUntilAsync(async () => await databases.Client.CountAsync(RecordTable.Client, CancellationToken.None) >= 10 * batchSize, "ten batches committed by the client");
        Process.GetProcessById(first.ProcessId).Kill(entireProcessTree: true); // SIGKILL: its requests in hand stay pending
        Assert.IsLessThan(batches * batchSize, await databases.Client.CountAsync(RecordTable.Client, CancellationToken.None), "killed too late to prove anything");

        var second = KilledProcesses.StartServer(new FakeBuildEngine(), "RedisStreamsServer", databases, artifacts, ("RedisEndpoint", TestRedis.Endpoint));
        try
        {
            Assert.IsTrue(await transfer.WaitAsync(TimeSpan.FromMinutes(3)), engine.Log);
            Assert.AreEqual(0, client.Reconnects, "the client saw no break: the requests waited in the stream");
            Assert.AreEqual(batches * batchSize, (await new TransferVerifier(databases.Server, databases.Client).VerifyAsync(batches * batchSize, CancellationToken.None)).Matched);
        }
        finally
        {
            Process.GetProcessById(second.ProcessId).Kill(entireProcessTree: true);
        }
    }

    [TestMethod]
    [DataRow("everysec")]
    [DataRow("always")]
    public async Task A_transfer_ends_with_every_row_once_across_a_restart_of_redis_server(string appendFsync)
    {
        await using var databases = TestDatabases.Sqlite();
        const int batches = 200, batchSize = 250;
        await new DataGenerator(databases.Server, NullEventLog.Instance).GenerateAsync(batches * batchSize, CancellationToken.None);
        await databases.Client.EnsureSchemaAsync(CancellationToken.None);
        using var directory = new TempDirectory("it-redis-restart-");
        var redis = TestRedis.Start(directory, appendFsync: appendFsync);
        var endpoint = redis.Options.Endpoint;
        try
        {
            await using var server = await RunningRedisServer.StartAsync(databases.Server, endpoint);
            var engine = new FakeBuildEngine();
            var client = Client(databases, engine, batches, batchSize, endpoint);
            var transfer = Task.Run(client.Execute);
            await Eventually.WaitUntilAsync(async () => await databases.Client.CountAsync(RecordTable.Client, CancellationToken.None) >= 10 * batchSize, "ten batches committed by the client");
            await redis.StopAsync(CancellationToken.None);
            redis.Dispose();
            Assert.IsLessThan(batches * batchSize, await databases.Client.CountAsync(RecordTable.Client, CancellationToken.None), "restarted too late");
            redis = TestRedis.Start(directory, redis.Options.Port, appendFsync); // the same append-only file: the streams and groups come back

            Assert.IsTrue(await transfer.WaitAsync(TimeSpan.FromMinutes(3)), engine.Log);
            Assert.IsGreaterThanOrEqualTo(1, client.Reconnects, engine.Log);
            Assert.AreEqual(batches * batchSize, (await new TransferVerifier(databases.Server, databases.Client).VerifyAsync(batches * batchSize, CancellationToken.None)).Matched);
        }
        finally
        {
            await redis.StopAsync(CancellationToken.None);
            redis.Dispose();
        }
    }

    [TestMethod]
    public async Task The_private_server_listens_on_loopback_only_keeps_its_files_in_its_folder_and_leaves_nothing_behind()
    {
        using var directory = new TempDirectory("it-redis-");
        var server = TestRedis.Start(directory, appendFsync: "always");
        var port = server.Options.Port;
        var processId = server.ProcessId;
        try
        {
            var mine = Listeners.Tcp().Where(l => l.Port == port).ToList();
            Assert.IsNotEmpty(mine, $"nothing listens on {port}");
            Assert.IsTrue(mine.All(l => l.Address is "127.0.0.1" or "::1"), string.Join(", ", mine));
            await using var connection = await ConnectionMultiplexer.ConnectAsync(new ConfigurationOptions { EndPoints = { server.Options.Endpoint }, AllowAdmin = true });
            Assert.AreEqual("always", (await connection.GetServers()[0].ConfigGetAsync("appendfsync")).Single().Value);
        }
        finally
        {
            await server.StopAsync(CancellationToken.None);
            server.Dispose();
        }
        Assert.IsEmpty(Listeners.Tcp().Where(l => l.Port == port).ToList(), "still listening");
        // redis-server names itself by its address, not its folder: looked for by its process id.
        Assert.IsFalse(Process.GetProcesses().Any(p => p.Id == processId && !p.HasExited), "redis-server outlived its stop");
        Assert.IsTrue(Directory.EnumerateFiles(directory, "*.aof", SearchOption.AllDirectories).Any(), "no append-only file in its folder");
    }
}
