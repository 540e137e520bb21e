namespace IntegrationTasks.Tests;

/// <summary>One client run as several clients at once, each with its own connection and share of the batches.</summary>
[TestClass]
[TestCategory("EndToEnd")]
public sealed class ManyClientsTests
{
    [TestMethod]
    [DynamicData(nameof(TcpGeneration.Names), typeof(TcpGeneration))]
    public async Task Eight_clients_at_once_each_move_their_share_and_every_row_arrives_once(string generation)
    {
        await using var databases = await TransferChecks.WithRecordsAsync("Sqlite", 4100);
        await using var server = new RunningTcpServer(databases.Server, TcpGeneration.All[generation]);
        using var folder = new TempDirectory("it-clients-");
        var engine = new FakeBuildEngine();
        var client = TcpGeneration.All[generation].NewClient();
        client.HostName = "127.0.0.1";
        client.Port = server.Port;
        client.Clients = 8;
        client.ResultFile = Path.Combine(folder, "run.json");
        // 41 batches over 8 clients: the first one takes 6, the others 5 — shares that do not divide evenly.
        Assert.IsTrue(client.For(databases, engine, totalBatches: 41, batchSize: 100).Execute(), engine.Log);

        Assert.AreEqual(4100, client.Records);
        var report = await new TransferVerifier(databases.Server, databases.Client).VerifyAsync(4100, CancellationToken.None);
        Assert.IsTrue(report.Success, report.ToString());
        await Eventually.WaitUntilAsync(() => server.Server.ConnectionsServed == 8, "eight connections served, one per client",
            seen: () => $"{server.Server.ConnectionsServed} served");
        var run = MeasurementLog.ReadSingle(client.ResultFile);
        Assert.AreEqual(8, run.Clients);
        Assert.AreEqual(41, run.BatchLatency!.Batches, "every client's batches in the one merged histogram");
        Assert.AreEqual($"{run.Transport} (8 clients)", Results.ReportContent.Summarise([run with { Repetition = 1 }]).Single().Transport);
    }

    /// <summary>
    /// Runs <paramref name="client"/> as <paramref name="clients"/> clients over <paramref name="totalBatches"/> of 100 records and checks
    /// what every many-client run must show: every row once, values equal; every batch in the one merged histogram.
    /// </summary>
    private static async Task<Measurement> RunManyAsync(TransferClientTask client, TestDatabases databases, int clients, int totalBatches, double rate = 0)
    {
        using var folder = new TempDirectory("it-clients-");
        var engine = new FakeBuildEngine();
        client.Clients = clients;
        client.Rate = rate;
        client.ResultFile = Path.Combine(folder, "run.json");
        Assert.IsTrue(await Task.Run(client.For(databases, engine, totalBatches, batchSize: 100).Execute), engine.Log);

        var report = await new TransferVerifier(databases.Server, databases.Client).VerifyAsync(totalBatches * 100, CancellationToken.None);
        Assert.IsTrue(report.Success, report.ToString());
        var run = MeasurementLog.ReadSingle(client.ResultFile);
        Assert.AreEqual(clients, run.Clients);
        Assert.AreEqual(totalBatches, run.BatchLatency!.Batches, "every client's batches in the one merged histogram");
        if (rate > 0)
        {
            Assert.AreEqual(rate, run.Rate);
            // Each client's share is at least totalBatches / clients batches, the last sent that many slots after the first.
            Assert.IsGreaterThanOrEqualTo((totalBatches / clients - 1) / rate, client.ElapsedSeconds, "the schedule holds the senders back");
        }
        return run;
    }

    public static IEnumerable<object[]> KestrelClients =>
    [
        ["GrpcClient"], ["GrpcStreaming"], ["HttpRequest"],
    ];

    [TestMethod]
    [DynamicData(nameof(KestrelClients))]
    public async Task Six_clients_of_a_Kestrel_transport_at_once_move_every_row_once(string transport)
    {
        await using var databases = await TransferChecks.WithRecordsAsync("Sqlite", 3000);
        await using var server = transport == "HttpRequest"
            ? await RunningHttpServer.StartAsync(databases)
            : await RunningHostModule.StartAsync(new IntegrationTasks.Grpc.GrpcServer { Connections = 4, Answerers = 2 }, databases, "");
        TransferClientTask client = transport switch
        {
            "GrpcClient" => new IntegrationTasks.Grpc.GrpcClient { Address = server.Url },
            "GrpcStreaming" => new IntegrationTasks.Grpc.GrpcStreaming { Address = server.Url },
            _ => new IntegrationTasks.Http.HttpRequest { Uri = server.Url },
        };
        await RunManyAsync(client, databases, clients: 6, totalBatches: 30);
    }

    [TestMethod]
    public async Task HttpRequest_in_open_loop_posts_each_batch_on_its_schedule_and_every_row_arrives_once()
    {
        await using var databases = await TransferChecks.WithRecordsAsync("Sqlite", 2400);
        await using var server = await RunningHttpServer.StartAsync(databases);
        var client = new IntegrationTasks.Http.HttpRequest { Uri = server.Url, MaxInFlight = 2 };
        var run = await RunManyAsync(client, databases, clients: 3, totalBatches: 24, rate: 40);
        Assert.IsNotNull(run.ReplyLatency);
        Assert.AreEqual(24, run.ReplyLatency.Batches, "each batch's reply marked once it was read whole");
    }

    [TestMethod]
    [Timeout(600_000, CooperativeCancellation = true)]
    public void The_Load_target_runs_each_client_count_verified_and_reports_throughput_and_latency_per_count()
    {
        using var artifacts = new TempDirectory("it-load-");
        var (exitCode, output) = HostingTests.RunBuild("Load", artifacts, "-p:LoadTransport=TcpClientMultiThreadTest3+PipelinedCopy", "-p:ClientCounts=1+3",
            "-p:RecordsPerClient=600", "-p:BatchSize=100", "-p:Repetitions=2", "-p:Warmup=false");
        Assert.AreEqual(0, exitCode, output);
        var folder = Path.Combine(artifacts, "results", "load");
        var runs = MeasurementLog.Read(Path.Combine(folder, "runs.jsonl"));
        var tcp = runs.Where(r => r.Transport == "TcpClientMultiThreadTest3").ToList();
        CollectionAssert.AreEquivalent(new[] { 1, 1, 3, 3 }, tcp.Select(r => r.Clients).ToList());
        Assert.IsTrue(tcp.All(r => r.Verified && r.BatchLatency is { Batches: > 0 }), output);
        CollectionAssert.AreEquivalent(new[] { 600, 600, 1800, 1800 }, tcp.Select(r => r.Records).ToList(), "RecordsPerClient × clients");
        CollectionAssert.AreEquivalent(new[] { 1, 1, 3, 3 }, runs.Where(r => r.Transport == "PipelinedCopy").Select(r => r.Clients).ToList(),
            "the reference at the same concurrencies");
        var md = File.ReadAllText(Path.Combine(folder, "results.md"));
        var results = ResultsJson.Load(folder);
        var atThreeClients = results.Row("TcpClientMultiThreadTest3 (3 clients)");
        Assert.AreEqual(36, atThreeClients.BatchLatency!.Batches, "every batch of the three clients in the run's histogram");
        // The many-clients section: a row per count with the server's side, and where the transport stops scaling.
        StringAssert.Contains(md, "## Many clients at once");
        Assert.IsTrue(atThreeClients is { Records: 1_800, MeanRecordsPerSecond: > 0 }, atThreeClients.ToString());
        StringAssert.Matches(MarkdownTable.Line(md, "- TcpClientMultiThreadTest3: "), new System.Text.RegularExpressions.Regex(@"(still|stops) scaling at \d client"));
        Assert.IsTrue(tcp.All(r => r.ClientPeakGrowthBytes is >= 0 && r.ServerPeakBytes > 0), "the client's growth and the server's peak, per run");
        Assert.IsTrue(tcp.All(r => r.ServerMaxConnections is not null && r.ReplyLatency is { Batches: > 0 } && r.ClientLockWaitSeconds >= 0 && r.ServerErrors is { Count: 0 }),
            "the server's connections, the replies' waits, the client's lock wait and the server's (no) coded errors are recorded");
        StringAssert.Contains(File.ReadAllText(Path.Combine(folder, "report.html")), "<svg id=\"throughput-clients\"");
        // The ratio to the reference is taken at the same concurrency: the 3-client row has one.
        var summary = Results.ReportContent.Summarise(runs).Single(s => s.Transport == "TcpClientMultiThreadTest3 (3 clients)");
        Assert.IsNotNull(summary.RatioToPipelined);
        Assert.IsTrue(Results.ReportContent.Summarise(runs).Single(s => s.Transport == "PipelinedCopy (3 clients)").Key is { IsReference: true, Transport: "PipelinedCopy", Clients: 3 });
        Assert.IsFalse(File.Exists(Path.Combine(artifacts, "results", "runs.jsonl")), "RunAll's results are left alone");
    }

    [TestMethod]
    [Timeout(600_000, CooperativeCancellation = true)]
    public void RunAll_takes_Clients_as_a_dimension_and_Load_runs_the_queue_and_file_transports_on_RunAll_s_broker()
    {
        using var artifacts = new TempDirectory("it-load-");
        var (exitCode, output) = HostingTests.RunBuild("RunAll", artifacts, "-p:Transports=NetTcpSmallBatchesAsync", "-p:Clients=1+3",
            "-p:RecordCounts=600+3000", "-p:BatchSize=300", "-p:Repetitions=1", "-p:Warmup=false", "-p:Peers=true");
        Assert.AreEqual(0, exitCode, output);
        var runs = MeasurementLog.Read(Path.Combine(artifacts, "results", "runs.jsonl"));
        CollectionAssert.AreEquivalent(new[] { "600/1", "3000/1", "3000/3" },
            runs.Where(r => r.Transport == "NetTcpSmallBatchesAsync").Select(r => $"{r.Records}/{r.Clients}").ToList(),
            "600 records are 2 batches: too few for 3 clients, so not run at 3");
        Assert.IsTrue(runs.All(r => r.Verified), output);
        CollectionAssert.AreEquivalent(new[] { 1, 1 }, runs.Where(r => r.Transport.StartsWith("Peer", StringComparison.Ordinal)).Select(r => r.Clients).ToList(),
            "the database's own tool once per record count");
        Assert.IsTrue(ResultsJson.Load(Path.Combine(artifacts, "results")).HasRow("NetTcpSmallBatchesAsync (3 clients)"));

        (exitCode, output) = HostingTests.RunBuild("Load", artifacts, "-p:LoadTransport=RabbitMQClientTest+FileTransferBigRequest", "-p:ClientCounts=2",
            "-p:RecordsPerClient=400", "-p:BatchSize=200", "-p:Repetitions=1", "-p:Warmup=false");
        Assert.AreEqual(0, exitCode, output);
        var load = MeasurementLog.Read(Path.Combine(artifacts, "results", "load", "runs.jsonl"));
        CollectionAssert.AreEquivalent(new[] { "RabbitMQClientTest/800/2", "FileTransferBigRequest/800/2" },
            load.Select(r => $"{r.Transport}/{r.Records}/{r.Clients}").ToList());
        Assert.IsTrue(load.All(r => r.Verified && r.BatchLatency is { Batches: 4 }), output);
        // Both servers can tell how many requests waited for them (the broker's request queue, the inbox), sampled while they ran.
        Assert.IsTrue(load.All(r => r.ServerMaxRequestsWaiting is >= 0), string.Join(", ", load.Select(r => $"{r.Transport}: {r.ServerMaxRequestsWaiting}")));
        StringAssert.Contains(output, "RabbitMQ stopped.");
    }

    [TestMethod]
    public async Task An_open_loop_run_sends_on_its_schedule_and_is_reported_as_such()
    {
        await using var databases = await TransferChecks.WithRecordsAsync("Sqlite", 2000);
        await using var server = new RunningTcpServer(databases.Server, TcpGeneration.All["TcpClient2"]);
        using var folder = new TempDirectory("it-rate-");
        var engine = new FakeBuildEngine();
        var client = TcpGeneration.All["TcpClient2"].NewClient();
        client.HostName = "127.0.0.1";
        client.Port = server.Port;
        client.Clients = 2;
        client.Rate = 50; // each client: a batch every 20 ms, 10 batches → its last goes at 180 ms at the earliest
        client.ResultFile = Path.Combine(folder, "run.json");
        Assert.IsTrue(client.For(databases, engine, totalBatches: 20, batchSize: 100).Execute(), engine.Log);

        Assert.IsGreaterThanOrEqualTo(0.18, client.ElapsedSeconds, "the schedule holds the senders back");
        var report = await new TransferVerifier(databases.Server, databases.Client).VerifyAsync(2000, CancellationToken.None);
        Assert.IsTrue(report.Success, report.ToString());
        var run = MeasurementLog.ReadSingle(client.ResultFile);
        Assert.AreEqual(50, run.Rate);
        Assert.AreEqual(20, run.BatchLatency!.Batches);
        Assert.AreEqual($"{run.Transport} (2 clients, open loop 50/s each)", Results.RowKey.Concurrency(run).Label);

        engine = new FakeBuildEngine();
        var files = new IntegrationTasks.Files.FileTransferRequest { Rate = 10 }.For(databases, engine, totalBatches: 4, batchSize: 10);
        Assert.IsFalse(files.Execute());
        StringAssert.Contains(engine.Log, "has no open loop so far (Rate=10 asked)");
    }

    [TestMethod]
    [DynamicData(nameof(TcpGeneration.Names), typeof(TcpGeneration))]
    public async Task A_client_over_the_servers_maximum_is_refused_with_IT3008_it_receives_and_the_others_are_served(string generation)
    {
        await using var databases = await TransferChecks.WithRecordsAsync("Sqlite", 1000);
        await using var server = new RunningTcpServer(databases.Server, TcpGeneration.All[generation], maxConnections: 2);
        // Two clients hold the server's two places (connected, idle).
        using var first = new System.Net.Sockets.TcpClient();
        using var second = new System.Net.Sockets.TcpClient();
        await first.ConnectAsync(System.Net.IPAddress.Loopback, server.Port);
        await second.ConnectAsync(System.Net.IPAddress.Loopback, server.Port);

        var engine = new FakeBuildEngine();
        var client = TcpGeneration.All[generation].NewClient();
        client.HostName = "127.0.0.1";
        client.Port = server.Port;
        Assert.IsFalse(client.For(databases, engine, totalBatches: 4, batchSize: 250).Execute());
        Assert.IsTrue(engine.HasErrorCode(ErrorCodes.ServerBusy), engine.Log);
        StringAssert.Contains(engine.Log, "The server refused: 2 clients are being served");
        StringAssert.Contains(engine.Log, "(MaxConnections)");
        StringAssert.Contains(string.Join("\n", server.Log.Lines), "warning IT3008: Refused the connection from");

        // A place frees: the next client is served in full.
        first.Dispose();
        await databases.Client.EmptyAsync(RecordTable.Client, CancellationToken.None);
        await Eventually.WaitUntilAsync(() =>
        {
            engine = new FakeBuildEngine();
            var again = TcpGeneration.All[generation].NewClient();
            again.HostName = "127.0.0.1";
            again.Port = server.Port;
            return again.For(databases, engine, totalBatches: 4, batchSize: 250).Execute();
        }, "a client served once a place was free", seen: () => engine.Log);
        var report = await new TransferVerifier(databases.Server, databases.Client).VerifyAsync(1000, CancellationToken.None);
        Assert.IsTrue(report.Success, report.ToString());
    }

    public static IEnumerable<object[]> LimitedServers =>
    [
        ["NetTcpSmallBatchesAsync"], ["SoapSmallBatches"], ["GrpcClient"], ["GrpcStreaming"], ["HttpRequest"], ["RestJson"],
    ];

    [TestMethod]
    [DynamicData(nameof(LimitedServers))]
    public async Task A_client_over_a_web_service_s_maximum_is_refused_with_IT3008_in_its_protocol_and_the_others_are_served(string transport)
    {
        await using var databases = await TransferChecks.WithRecordsAsync("Sqlite", 1000);
        await using var server = await RunningWebService.StartAsync(transport, databases, maxConnections: 1);
        var port = server.Port;
        TransferClientTask NewClient() => server.NewClient();

        // One client holds the server's one place (connected, idle).
        var holder = new System.Net.Sockets.TcpClient();
        await holder.ConnectAsync(System.Net.IPAddress.Loopback, port);
        await Task.Delay(200); // accepted before the next connects (the order the limit counts in)
        var engine = new FakeBuildEngine();
        var refused = NewClient().For(databases, engine, totalBatches: 4, batchSize: 250);
        Assert.IsFalse(await Task.Run(refused.Execute), engine.Log);
        Assert.IsTrue(engine.HasErrorCode(ErrorCodes.ServerBusy), engine.Log);
        StringAssert.Contains(engine.Log, "the most this server takes at once");
        StringAssert.Contains(server.Log, "IT3008");
        if (transport == "RestJson")
        {
            // A client no one here wrote gets the refusal as every other REST refusal: a problem whose detail is the coded error.
            var (status, type, body) = CurlRequest.Run($"{server.Url}?firstId=1&count=10");
            Assert.AreEqual(("503", "application/problem+json"), (status, type), body);
            StringAssert.StartsWith(System.Text.Json.JsonDocument.Parse(body).RootElement.GetProperty("detail").GetString(), ErrorCodes.ServerBusy + ":");
        }

        // The place frees: the next client is served in full.
        holder.Dispose();
        await databases.Client.EmptyAsync(RecordTable.Client, CancellationToken.None);
        await Eventually.WaitUntilAsync(() =>
        {
            engine = new FakeBuildEngine();
            return NewClient().For(databases, engine, totalBatches: 4, batchSize: 250).Execute();
        }, "a client served once the place was free", seen: () => engine.Log);
        var report = await new TransferVerifier(databases.Server, databases.Client).VerifyAsync(1000, CancellationToken.None);
        Assert.IsTrue(report.Success, report.ToString());
    }

    [DoNotParallelize] // the suite's broker: its queues are purged and its connection limit set
    [TestMethod]
    public async Task A_RabbitMQ_client_over_the_broker_s_maximum_is_refused_with_IT3008_and_the_server_goes_on_serving()
    {
        await TestBroker.PurgeAsync();
        await using var databases = await TransferChecks.WithRecordsAsync("Sqlite", 1000);
        await using var server = await RunningQueueServer.StartAsync(databases.Server, IntegrationTasks.Queues.QueueTopology.Fast);
        IntegrationTasks.Queues.RabbitMQClientTest NewClient() => new() { RabbitMQPort = TestBroker.Options.AmqpPort };
        var engine = new FakeBuildEngine();
        // The server's own connection is the one place.
        await TestBroker.SetConnectionLimitAsync(1);
        try
        {
            Assert.IsFalse(await Task.Run(NewClient().For(databases, engine, totalBatches: 4, batchSize: 250).Execute), engine.Log);
            Assert.IsTrue(engine.HasErrorCode(ErrorCodes.ServerBusy), engine.Log);
            StringAssert.Contains(engine.Log, "connection limit (1) is reached");
        }
        finally
        {
            await TestBroker.SetConnectionLimitAsync(-1);
        }
        engine = new FakeBuildEngine();
        Assert.IsTrue(await Task.Run(NewClient().For(databases, engine, totalBatches: 4, batchSize: 250).Execute), engine.Log);
        var report = await new TransferVerifier(databases.Server, databases.Client).VerifyAsync(1000, CancellationToken.None);
        Assert.IsTrue(report.Success, report.ToString());
    }

    [TestMethod]
    public async Task Two_hundred_fifty_six_clients_connecting_at_once_neither_crash_nor_hang_the_server()
    {
        await using var databases = await TransferChecks.WithRecordsAsync("Sqlite", 1000);
        await using var server = new RunningTcpServer(databases.Server, TcpGeneration.All["TcpClient2"]);
        var sockets = Enumerable.Range(0, 256).Select(_ => new System.Net.Sockets.TcpClient()).ToList();
        try
        {
            await Task.WhenAll(sockets.Select(s => s.ConnectAsync(System.Net.IPAddress.Loopback, server.Port)));
            // 100 places (MaxConnections): the other 156 are each refused with a coded line, and each reads its refusal.
            await Eventually.WaitUntilAsync(() => server.Log.Lines.Count(l => l.StartsWith("warning IT3008:", StringComparison.Ordinal)) == 156,
                "156 refusals logged", seen: () => $"{server.Log.Lines.Count(l => l.Contains("IT3008", StringComparison.Ordinal))} logged");
            var refused = 0;
            await Task.WhenAll(sockets.Select(async s =>
            {
                using var wait = new CancellationTokenSource(TimeSpan.FromSeconds(10)); // each refusal is written right after its line (above)
                var buffer = new byte[4096];
                try
                {
                    var read = await s.GetStream().ReadAsync(buffer, wait.Token);
                    if (read > 0 && System.Text.Encoding.UTF8.GetString(buffer, 0, read).Contains("IT3008", StringComparison.Ordinal))
                        Interlocked.Increment(ref refused);
                }
                catch (OperationCanceledException)
                {
                    // served: an idle connection the server keeps waiting for a request
                }
            }));
            Assert.AreEqual(156, refused);
        }
        finally
        {
            sockets.ForEach(s => s.Dispose());
        }
        await Eventually.WaitUntilAsync(() =>
        {
            var engine = new FakeBuildEngine();
            var client = TcpGeneration.All["TcpClient2"].NewClient();
            client.HostName = "127.0.0.1";
            client.Port = server.Port;
            return client.For(databases, engine, totalBatches: 4, batchSize: 250).Execute();
        }, "a client served once the 256 were gone");
        var report = await new TransferVerifier(databases.Server, databases.Client).VerifyAsync(1000, CancellationToken.None);
        Assert.IsTrue(report.Success, report.ToString());
    }

    [TestMethod]
    [DataRow("NetTcpSmallBatchesAsync")]
    [DataRow("GrpcClient")]
    [DataRow("SoapSmallBatchesAsync")]
    public async Task Two_hundred_fifty_six_idle_connections_neither_crash_nor_hang_a_web_service_and_a_client_is_still_served(string transport)
    {
        await using var databases = await TransferChecks.WithRecordsAsync("Sqlite", 1000);
        // Places for all of them (net.tcp's maximum is 100 by default, Kestrel's 1000).
        await using var server = await RunningWebService.StartAsync(transport, databases, maxConnections: 300);
        var port = server.Port;
        var sockets = Enumerable.Range(0, 256).Select(_ => new System.Net.Sockets.TcpClient()).ToList();
        try
        {
            // All at once, then held open without a byte sent (under the server's maximum: they keep their places).
            await Task.WhenAll(sockets.Select(s => s.ConnectAsync(System.Net.IPAddress.Loopback, port)));
            var engine = new FakeBuildEngine();
            var client = server.NewClient();
            Assert.IsTrue(await Task.Run(client.For(databases, engine, totalBatches: 4, batchSize: 250).Execute), engine.Log);
        }
        finally
        {
            sockets.ForEach(s => s.Dispose());
        }
        var report = await new TransferVerifier(databases.Server, databases.Client).VerifyAsync(1000, CancellationToken.None);
        Assert.IsTrue(report.Success, report.ToString());
    }

    [TestMethod]
    public async Task More_clients_than_batches_or_a_transport_that_runs_one_client_only_is_a_coded_error()
    {
        await using var databases = TestDatabases.Sqlite();
        var engine = new FakeBuildEngine();
        var tcp = new IntegrationTasks.Tcp.TcpClient2 { Clients = 5 }.For(databases, engine, totalBatches: 4, batchSize: 10);
        Assert.IsFalse(tcp.Execute());
        Assert.IsTrue(engine.HasErrorCode(ErrorCodes.InvalidParameter), engine.Log);
        StringAssert.Contains(engine.Log, "each client needs a batch of its own (was 5)");

        engine = new FakeBuildEngine();
        var peer = new IntegrationTasks.Baseline.PeerCopy { Clients = 2, ServerConnString = databases.Server.ConnectionString }
            .For(databases, engine, totalBatches: 4, batchSize: 10);
        Assert.IsFalse(peer.Execute());
        Assert.IsTrue(engine.HasErrorCode(ErrorCodes.InvalidParameter), engine.Log);
        StringAssert.Contains(engine.Log, "runs as one client only (Clients=2 asked)");
    }

    [TestMethod]
    [DataRow("SoapSmallBatches", 0)]
    [DataRow("SoapSmallBatchesAsync", 40)]
    [DataRow("NetTcpSmallBatchesMultiThread", 0)]
    [DataRow("NetTcpSmallBatchesAsync", 40)]
    public async Task Five_clients_of_a_web_service_at_once_move_every_row_once(string transport, double rate)
    {
        await using var databases = await TransferChecks.WithRecordsAsync("Sqlite", 2500);
        var soap = transport.StartsWith("Soap", StringComparison.Ordinal);
        await using IAsyncDisposable server = soap
            ? await RunningHostModule.StartAsync(new IntegrationTasks.Wcf.SoapServer { Connections = 4, Answerers = 2 }, databases, IntegrationTasks.Wcf.ServiceNames.SoapPath)
            : await RunningNetTcpServer.StartAsync(databases.Server);
        var client = (IntegrationTasks.Wcf.WcfClientTask)Activator.CreateInstance(
            typeof(IntegrationTasks.Wcf.WcfClientTask).Assembly.GetType($"IntegrationTasks.Wcf.{transport}", throwOnError: true)!)!;
        client.Address = server is RunningHostModule host ? host.Url : ((RunningNetTcpServer)server).Address;
        client.MaxInFlight = 3;
        // The asynchronous variants at 40 batches/s: each client's 5 batches go 25 ms apart.
        await RunManyAsync(client, databases, clients: 5, totalBatches: 25, rate);
    }

    [DoNotParallelize] // the suite's broker: its queues are purged and its connection limit set
    [TestMethod]
    [DataRow(false, 0)]
    [DataRow(false, 40)]
    [DataRow(true, 0)]
    public async Task Four_RabbitMQ_clients_each_with_its_own_reply_queue_move_every_row_once(bool durable, double rate)
    {
        await TestBroker.PurgeAsync();
        await using var databases = await TransferChecks.WithRecordsAsync("Sqlite", 2000);
        var topology = durable ? IntegrationTasks.Queues.QueueTopology.Reliable : IntegrationTasks.Queues.QueueTopology.Fast;
        await using var server = await RunningQueueServer.StartAsync(databases.Server, topology);
        IntegrationTasks.Queues.RabbitMQClientTask client = durable ? new IntegrationTasks.Queues.RabbitMQDurable() : new IntegrationTasks.Queues.RabbitMQClientTest();
        client.RabbitMQPort = TestBroker.Options.AmqpPort;
        client.MaxInFlight = 3;
        await RunManyAsync(client, databases, clients: 4, totalBatches: 20, rate);
        Assert.AreEqual(20, server.Server.Answered, "each batch answered once");
    }

    [TestMethod]
    [DataRow(false)]
    [DataRow(true)]
    public async Task Three_file_transfer_clients_on_one_inbox_each_get_their_own_share(bool listIds)
    {
        await using var databases = await TransferChecks.WithRecordsAsync("Sqlite", 3000);
        await using var server = new RunningFileServer(databases.Server);
        IntegrationTasks.Files.FileTransferClientTask client = listIds ? new IntegrationTasks.Files.FileTransferBigRequest() : new IntegrationTasks.Files.FileTransferRequest();
        client.OutputDir = server.ServerInbox;
        client.InputDir = server.ClientInbox;
        // Each batch's wait runs from its client's request file to its commit.
        await RunManyAsync(client, databases, clients: 3, totalBatches: 30);
        Assert.AreEqual(3, server.Server.Answered, "one request file per client");
    }
}
