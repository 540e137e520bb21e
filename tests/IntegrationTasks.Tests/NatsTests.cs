using NATS.Client.Core;
using NATS.Client.JetStream;

namespace IntegrationTasks.Tests;

[TestClass]
[TestCategory("EndToEnd")]
public sealed class NatsTests
{
    [TestInitialize]
    public async Task EmptyStreams() => await TestNats.PurgeAsync();

    private static NatsClientTask Client(bool jetStream, TestDatabases databases, FakeBuildEngine engine, int totalBatches = 10, int batchSize = 200,
        string? url = null)
    {
        NatsClientTask client = jetStream ? new NatsJetStream() : new NatsClient();
        client.NatsUrl = url ?? TestNats.Url;
        client.MaxInFlight = 4;
        return client.For(databases, engine, totalBatches, batchSize);
    }

    [TestMethod]
    [EachVariantOnEachDatabase]
    public async Task Both_NATS_transports_move_every_row_intact(bool jetStream, string provider)
    {
        var client = await TransferChecks.AssertServedEveryRowAsync(provider, 2000, databases => RunningNatsServer.StartAsync(databases.Server, jetStream),
            (_, databases, engine) => Client(jetStream, databases, engine));
        Assert.IsGreaterThan(2000L * 100, client.BytesReceived);
    }

    [TestMethod]
    [DataRow(false)]
    [DataRow(true)]
    public async Task A_request_the_server_refuses_fails_its_client_with_the_servers_code_and_the_server_goes_on(bool jetStream)
    {
        await using var databases = await TransferChecks.WithRecordsAsync("Sqlite", 1000);
        await using (var strict = await RunningNatsServer.StartAsync(databases.Server, jetStream, maxMessageBytes: 40))
        {
            var engine = new FakeBuildEngine();
            Assert.IsFalse(await Task.Run(Client(jetStream, databases, engine, 5, 200).Execute), engine.Log);
            Assert.IsTrue(engine.HasErrorCode(ErrorCodes.FrameTooLarge), engine.Log);
            Assert.IsTrue(strict.Log.Lines.Any(l => l.StartsWith($"warning {ErrorCodes.FrameTooLarge}", StringComparison.Ordinal)), string.Join("\n", strict.Log.Lines));
        }
        await TestNats.PurgeAsync();
        await databases.Client.EmptyAsync(RecordTable.Client, CancellationToken.None);

        // A request that is not XML: refused with its code, and the same server answers the next client in full.
        await using var server = await RunningNatsServer.StartAsync(databases.Server, jetStream);
        await using (var connection = new NatsConnection(new NatsOpts { Url = TestNats.Url }))
        {
            var refusal = jetStream ? await RefusalThroughJetStreamAsync(connection) : await RefusalThroughCoreAsync(connection);
            StringAssert.StartsWith(refusal, $"{ErrorCodes.MalformedXml}: ");
        }
        var client = Client(jetStream, databases, new FakeBuildEngine(), 5, 200);
        Assert.IsTrue(await Task.Run(client.Execute));
        Assert.AreEqual(1000, (await new TransferVerifier(databases.Server, databases.Client).VerifyAsync(1000, CancellationToken.None)).Matched);
    }

    [TestMethod]
    [DataRow(false)]
    [DataRow(true)]
    public async Task A_reply_over_the_servers_max_payload_is_refused_with_its_code_not_retried(bool jetStream)
    {
        // A server of one's own (NatsUrl) whose max_payload is below a reply: once, JetStream delivered such a request again forever
        // and core NATS let its client time out.
        await using var databases = await TransferChecks.WithRecordsAsync("Sqlite", 1000);
        using var directory = new TempDirectory("it-nats-small-");
        var broker = TestNats.Start(directory, maxPayloadBytes: 16 * 1024); // a request of 200 IDs fits, its reply of 200 records does not
        try
        {
            await using var server = await RunningNatsServer.StartAsync(databases.Server, jetStream, broker.Options.Url);
            var engine = new FakeBuildEngine();
            Assert.IsFalse(await Task.Run(Client(jetStream, databases, engine, 5, 200, broker.Options.Url).Execute), engine.Log);
            Assert.IsTrue(engine.HasErrorCode(ErrorCodes.FrameTooLarge), engine.Log);
            Assert.AreEqual(0L, await databases.Client.CountAsync(RecordTable.Client, CancellationToken.None));
        }
        finally
        {
            await broker.StopAsync(CancellationToken.None);
            broker.Dispose();
        }
    }

    private static async Task<string> RefusalThroughCoreAsync(NatsConnection connection)
    {
        var reply = await connection.RequestAsync<byte[], byte[]>(NatsCoreServer.Subject, "not xml at all"u8.ToArray(),
            replyOpts: new NatsSubOpts { Timeout = TimeSpan.FromSeconds(10) });
        return reply.Headers![NatsConnections.ErrorHeader].ToString();
    }

    private static async Task<string> RefusalThroughJetStreamAsync(NatsConnection connection)
    {
        var js = new NatsJSContext(connection);
        await JetStreamTopology.EnsureStreamsAsync(js, CancellationToken.None);
        var replies = await JetStreamTopology.ClientConsumerAsync(js, "test", 7, 4, CancellationToken.None);
        var ack = await js.PublishAsync(JetStreamTopology.RequestSubject, "not xml at all"u8.ToArray(), headers: new NatsHeaders
        {
            [JetStreamTopology.BatchHeader] = "0", [JetStreamTopology.RequestIdHeader] = "test.7.0", [JetStreamTopology.ReplySubjectHeader] = JetStreamTopology.ReplySubject("test", 7),
        });
        Assert.IsNull(ack.Error);
        using var wait = new CancellationTokenSource(TimeSpan.FromSeconds(10));
        var reply = await replies.NextAsync<byte[]>(cancellationToken: wait.Token);
        Assert.IsNotNull(reply);
        await reply.AckAsync();
        return reply.Headers![NatsConnections.ErrorHeader].ToString();
    }

    [TestMethod]
    public async Task A_JetStream_client_killed_mid_transfer_resumes_and_ends_with_every_row_once()
    {
        await using var databases = TestDatabases.Sqlite();
        const int batches = 200, batchSize = 250;
        await new DataGenerator(databases.Server, NullEventLog.Instance).GenerateAsync(batches * batchSize, CancellationToken.None);
        await databases.Client.EnsureSchemaAsync(CancellationToken.None); // the test watches ClientTable fill up
        await using var server = await RunningNatsServer.StartAsync(databases.Server, jetStream: true);

        await KilledProcesses.KillClientAfterTenBatchesAsync("NatsJetStream", databases, batches, batchSize, $"-p:NatsUrl={TestNats.Url}");

        var engine = new FakeBuildEngine();
        Assert.IsTrue(await Task.Run(Client(true, databases, engine, batches, batchSize).Execute), engine.Log);
        Assert.IsTrue(engine.Messages.Any(m => m.Message?.Contains("resuming with the rest", StringComparison.Ordinal) == true), engine.Log);
        var report = await new TransferVerifier(databases.Server, databases.Client).VerifyAsync(batches * batchSize, CancellationToken.None);
        Assert.AreEqual(batches * batchSize, report.Matched);
    }

    [TestMethod]
    public async Task A_JetStream_transfer_survives_its_server_being_killed_mid_transfer()
    {
        await using var databases = TestDatabases.Sqlite();
        const int batches = 200, batchSize = 250;
        await new DataGenerator(databases.Server, NullEventLog.Instance).GenerateAsync(batches * batchSize, CancellationToken.None);
        await databases.Client.EnsureSchemaAsync(CancellationToken.None);
        var engine = new FakeBuildEngine();
        using var artifacts = new TempDirectory("it-jetstream-");

        // The server is a real process (as RunAll runs it), so that it can be killed outright.
        var first = StartServerProcess(engine, databases, artifacts);
        var client = Client(jetStream: true, databases, engine, batches, batchSize);
        var transfer = Task.Run(client.Execute);
        await Eventually.WaitUntilAsync(async () => await databases.Client.CountAsync(RecordTable.Client, CancellationToken.None) >= 10 * batchSize, "ten batches committed by the client");
        Process.GetProcessById(first.ProcessId).Kill(entireProcessTree: true); // SIGKILL: its requests in hand stay unacknowledged
        Assert.IsLessThan(batches * batchSize, await databases.Client.CountAsync(RecordTable.Client, CancellationToken.None), "killed too late to prove anything");

        var second = StartServerProcess(new FakeBuildEngine(), databases, artifacts);
        try
        {
            Assert.IsTrue(await transfer.WaitAsync(TimeSpan.FromMinutes(3)), engine.Log);
            Assert.AreEqual(0, client.Reconnects, "the client saw no break: the requests waited in the stream");
            var report = await new TransferVerifier(databases.Server, databases.Client).VerifyAsync(batches * batchSize, CancellationToken.None);
            Assert.AreEqual(batches * batchSize, report.Matched);
        }
        finally
        {
            Process.GetProcessById(second.ProcessId).Kill(entireProcessTree: true);
        }
    }

    private static StartServer StartServerProcess(FakeBuildEngine engine, TestDatabases databases, string artifacts) =>
        KilledProcesses.StartServer(engine, "NatsJetStreamServer", databases, artifacts, ("NatsUrl", TestNats.Url));

    [TestMethod]
    [DataRow(false)]
    [DataRow(true)]
    public async Task Both_NATS_transports_end_with_every_row_once_across_a_restart_of_nats_server(bool jetStream)
    {
        await using var databases = TestDatabases.Sqlite();
        const int batches = 200, batchSize = 250;
        await new DataGenerator(databases.Server, NullEventLog.Instance).GenerateAsync(batches * batchSize, CancellationToken.None);
        await databases.Client.EnsureSchemaAsync(CancellationToken.None);
        using var directory = new TempDirectory("it-nats-restart-");
        var broker = TestNats.Start(directory);
        var url = broker.Options.Url;
        try
        {
            await using var server = await RunningNatsServer.StartAsync(databases.Server, jetStream, url);
            var engine = new FakeBuildEngine();
            var client = Client(jetStream, databases, engine, batches, batchSize, url);
            var transfer = Task.Run(client.Execute);
            await Eventually.WaitUntilAsync(async () => await databases.Client.CountAsync(RecordTable.Client, CancellationToken.None) >= 10 * batchSize, "ten batches committed by the client");
            await broker.StopAsync(CancellationToken.None);
            broker.Dispose();
            Assert.IsLessThan(batches * batchSize, await databases.Client.CountAsync(RecordTable.Client, CancellationToken.None), "restarted too late");
            broker = TestNats.Start(directory, broker.Options.Port); // the same store: JetStream's streams come back with it

            Assert.IsTrue(await transfer.WaitAsync(TimeSpan.FromMinutes(3)), engine.Log);
            Assert.IsGreaterThanOrEqualTo(1, client.Reconnects, engine.Log);
            var report = await new TransferVerifier(databases.Server, databases.Client).VerifyAsync(batches * batchSize, CancellationToken.None);
            Assert.AreEqual(batches * batchSize, report.Matched);
        }
        finally
        {
            await broker.StopAsync(CancellationToken.None);
            broker.Dispose();
        }
    }

    [TestMethod]
    public async Task The_private_server_listens_on_loopback_only_keeps_its_files_in_its_folder_and_leaves_nothing_behind()
    {
        using var directory = new TempDirectory("it-nats-");
        var server = TestNats.Start(directory);
        var port = server.Options.Port;
        try
        {
            var mine = Listeners.Tcp().Where(l => l.Port == port).ToList();
            Assert.IsNotEmpty(mine, $"nothing listens on {port}");
            Assert.IsTrue(mine.All(l => l.Address is "127.0.0.1" or "::1"), string.Join(", ", mine));
            await using var connection = new NatsConnection(new NatsOpts { Url = server.Options.Url });
            await JetStreamTopology.EnsureStreamsAsync(new NatsJSContext(connection), CancellationToken.None);
            Assert.IsTrue(Directory.EnumerateFiles(server.Options.StoreDirectory, "*", SearchOption.AllDirectories).Any(), "JetStream stores nothing in its folder");
        }
        finally
        {
            await server.StopAsync(CancellationToken.None);
            server.Dispose();
        }
        Assert.IsEmpty(Listeners.Tcp().Where(l => l.Port == port).ToList(), "still listening");
        Assert.DoesNotContain((string)directory, Processes.AllCommandLines(), "nats-server outlived its stop");
        // Stopped by SIGTERM, which nats-server takes as a clean shutdown, not killed.
        StringAssert.Contains(File.ReadAllText(Path.Combine(directory, "nats-server.log")), "Server Exiting");
    }
}
