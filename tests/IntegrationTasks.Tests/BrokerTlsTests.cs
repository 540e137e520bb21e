namespace IntegrationTasks.Tests;

/// <summary>The brokers over TLS (AMQPS, NATS's and Redis's TLS listeners): certificates from the suite's authority only.</summary>
[TestClass]
[TestCategory("EndToEnd")]
public sealed class BrokerTlsTests
{
    [TestMethod]
    public async Task Each_TLS_only_broker_takes_a_client_of_its_authority_and_refuses_another_authoritys_with_IT3009()
    {
        using var folder = new TempDirectory("it-broker-tls-");
        using var other = new TempDirectory("it-broker-tls-other-");
        Hosting.TlsCertificates.MakeNew(other);
        var tls = BrokerTls.For("true", Path.Combine(folder, "tls"), "127.0.0.1");
        Assert.IsFalse(tls.Plaintext);
        var authority = new BrokerClientTls(tls.Certificates!.LoadAuthority(), null);
        await using var brokers = await TlsBrokers.StartAsync(folder, tls);
        var (redis, nats, rabbitmq) = (brokers.Redis, brokers.Nats, brokers.RabbitMq);
        {
            var redisEndpoint = $"127.0.0.1:{redis.Options.TlsPort}";
            foreach (var client in new IntegrationTasks.Transfer.TransferClientTask[]
                     {
                         new RedisStreams { RedisEndpoint = redisEndpoint, Tls = true, TlsFolder = other },
                         new NatsJetStream { NatsUrl = nats.Options.Url, Tls = true, TlsFolder = other },
                         new RabbitMQDurable { RabbitMQPort = rabbitmq.Options.AmqpsPort, Tls = true, TlsFolder = other },
                     })
            {
                await using var databases = TestDatabases.Sqlite();
                var engine = new FakeBuildEngine();
                client.For(databases, engine, totalBatches: 2, batchSize: 10);
                Assert.IsFalse(await Task.Run(client.Execute), engine.Log);
                CollectionAssert.AreEqual(new[] { ErrorCodes.TlsRefused }, engine.Errors.Select(e => e.Code).ToArray(), $"{client.GetType().Name}: {engine.Log}");
            }
            // A client of the broker's own authority is let in, over TLS only: nothing listens in plaintext.
            using (var connection = await RedisConnections.ConnectAsync(redisEndpoint, "test", null, authority, CancellationToken.None))
                Assert.AreEqual("PONG", (await connection.GetDatabase().ExecuteAsync("PING")).ToString());
            Assert.AreEqual(ErrorCodes.BrokerUnavailable, (await Assert.ThrowsExactlyAsync<IntegrationException>(() =>
                RedisConnections.ConnectAsync($"127.0.0.1:{redis.Options.Port}", "plain", null, CancellationToken.None))).Code);
            await using (var connection = new NATS.Client.Core.NatsConnection(NatsConnections.ClientOptions(nats.Options.Url, "test", null, authority)))
                await NatsConnections.ConnectAsync(connection, nats.Options.Url, null, CancellationToken.None);
            await using (var connection = await new BrokerOptions { Port = rabbitmq.Options.AmqpsPort, ClientTls = authority }.ConnectAsync("test", CancellationToken.None))
                Assert.IsTrue(connection.IsOpen);
        }
    }

    [TestMethod]
    public async Task Each_broker_asking_for_client_certificates_takes_only_a_client_presenting_one_from_its_authority()
    {
        using var folder = new TempDirectory("it-broker-mtls-");
        var tlsFolder = Path.Combine(folder, "tls");
        var tls = BrokerTls.For("true", tlsFolder, "127.0.0.1", clientCertificates: true);
        await using var brokers = await TlsBrokers.StartAsync(folder, tls);
        var (redis, nats, rabbitmq) = (brokers.Redis, brokers.Nats, brokers.RabbitMq);
        {
            var redisEndpoint = $"127.0.0.1:{redis.Options.TlsPort}";
            // Trusting the broker but presenting nothing: refused, coded, each once.
            foreach (var client in new IntegrationTasks.Transfer.TransferClientTask[]
                     {
                         new RedisStreams { RedisEndpoint = redisEndpoint, Tls = true, TlsFolder = tlsFolder },
                         new NatsJetStream { NatsUrl = nats.Options.Url, Tls = true, TlsFolder = tlsFolder },
                         new RabbitMQDurable { RabbitMQPort = rabbitmq.Options.AmqpsPort, Tls = true, TlsFolder = tlsFolder },
                     })
            {
                await using var databases = TestDatabases.Sqlite();
                var engine = new FakeBuildEngine();
                client.For(databases, engine, totalBatches: 2, batchSize: 10);
                Assert.IsFalse(await Task.Run(client.Execute), engine.Log);
                CollectionAssert.AreEqual(new[] { ErrorCodes.TlsRefused }, engine.Errors.Select(e => e.Code).ToArray(), $"{client.GetType().Name}: {engine.Log}");
            }
            var mine = BrokerClientTls.For(true, tlsFolder, clientCertificates: true)!;
            Assert.IsNotNull(mine.Certificate);
            using (var connection = await RedisConnections.ConnectAsync(redisEndpoint, "test", null, mine, CancellationToken.None))
                Assert.AreEqual("PONG", (await connection.GetDatabase().ExecuteAsync("PING")).ToString());
            await using (var connection = new NATS.Client.Core.NatsConnection(NatsConnections.ClientOptions(nats.Options.Url, "test", null, mine)))
                await NatsConnections.ConnectAsync(connection, nats.Options.Url, null, CancellationToken.None);
            await using (var connection = await new BrokerOptions { Port = rabbitmq.Options.AmqpsPort, ClientTls = mine }.ConnectAsync("test", CancellationToken.None))
                Assert.IsTrue(connection.IsOpen);
        }
    }

    [TestMethod]
    public void RunAll_with_Tls_false_and_true_and_credentials_moves_every_queue_transports_rows_both_ways()
    {
        using var artifacts = new TempDirectory("it-broker-tls-runall-");
        var (exitCode, output) = HostingTests.RunBuild("RunAll", artifacts, "-p:Transports=RabbitMQDurable+Amqp10Durable+NatsJetStream+RedisStreams+PipelinedCopy",
            "-p:Tls=false+true", "-p:BrokerCredentials=true", "-p:RecordCounts=2000", "-p:Clients=2", "-p:Repetitions=2", "-p:Warmup=false", "-p:Peers=false");
        Assert.AreEqual(0, exitCode, output);
        var runs = MeasurementLog.Read(Path.Combine(artifacts, "results", "runs.jsonl"));
        Assert.HasCount(20, runs, output);
        // Two clients a run, every row of the run verified.
        Assert.IsTrue(runs.All(r => r is { Verified: true, Clients: 2 } && r.RowsMatched == r.Records), output);
        foreach (var tls in new[] { false, true })
            CollectionAssert.AreEquivalent(new[] { "Amqp10Durable", "NatsJetStream", "PipelinedCopy", "RabbitMQDurable", "RedisStreams" },
                runs.Where(r => r.Key.Tls == tls).Select(r => r.Transport).Distinct().ToArray(), $"tls {tls}");
        var costs = MarkdownTable.With(File.ReadAllText(Path.Combine(artifacts, "results", "results.md")), "Paired TLS × plaintext");
        CollectionAssert.AreEquivalent(new[] { "Amqp10Durable", "NatsJetStream", "RabbitMQDurable", "RedisStreams" }.Select(t => $"{t} (2 clients)").ToArray(),
            costs.Rows.Select(r => r[0]).ToArray());
        // Each pass's servers used their own listener of the one broker (the ready lines name the ports); NATS's TLS clients require
        // TLS on its one port.
        foreach (var server in new[] { @"RedisStreamsServer is ready at redis://127\.0\.0\.1:(\d+)/", @"RabbitMQDurableServer is ready at amqp://127\.0\.0\.1:(\d+)/" })
            Assert.HasCount(2, System.Text.RegularExpressions.Regex.Matches(output, server).Select(m => m.Groups[1].Value).Distinct(), server);
        StringAssert.Contains(File.ReadAllText(Path.Combine(artifacts, "rabbitmq", "rabbitmq.conf")), "listeners.ssl.default");
        HostingTests.AssertEndedCleanly(artifacts);
    }

    [TestMethod]
    public void Over_TLS_a_reset_connection_and_two_clients_still_move_every_row()
    {
        using var artifacts = new TempDirectory("it-tls-faults-");
        var (exitCode, output) = HostingTests.RunBuild("RunAll", artifacts, "-p:Transports=WebSocketClient+RedisStreams+PipelinedCopy", "-p:Tls=true",
            "-p:Fault=Reset", "-p:Clients=2", "-p:RecordCounts=4000", "-p:Repetitions=1", "-p:Warmup=false", "-p:Peers=false", "-p:BatchSize=500");
        Assert.AreEqual(0, exitCode, output);
        var runs = MeasurementLog.Read(Path.Combine(artifacts, "results", "runs.jsonl"));
        CollectionAssert.AreEquivalent(new[] { "PipelinedCopy", "RedisStreams", "WebSocketClient" }, runs.Select(r => r.Transport).ToArray());
        Assert.IsTrue(runs.All(r => r.Verified && r.Key.Tls && r.Clients == 2), output);
        // The relay passed TLS through untouched and cut each transport's connection once; each resumed over a new handshake.
        Assert.IsTrue(runs.Where(r => r.Kind == RunKind.Transport).All(r => r.Key.Fault == "Reset" && r.Reconnects > 0), string.Join("\n", runs));
        HostingTests.AssertEndedCleanly(artifacts);
    }

    /// <summary>The three brokers with one TLS setting, each on free ports in its own folder; stopped together.</summary>
    private sealed record TlsBrokers(BrokerProcess<RedisServerOptions> Redis, BrokerProcess<NatsServerOptions> Nats, RabbitMqNode RabbitMq) : IAsyncDisposable
    {
        public static async Task<TlsBrokers> StartAsync(string folder, BrokerTls tls)
        {
            var redis = await RedisServerProcess.StartAsync(new RedisServerOptions
            {
                Directory = Path.Combine(folder, "redis"), Port = TestPorts.Free(), TlsPort = TestPorts.Free(), Tls = tls,
            }, log: null, TimeSpan.FromSeconds(60), CancellationToken.None);
            BrokerProcess<NatsServerOptions>? nats = null;
            try
            {
                nats = await NatsServerProcess.StartAsync(new NatsServerOptions { Directory = Path.Combine(folder, "nats"), Port = TestPorts.Free(), Tls = tls },
                    log: null, TimeSpan.FromSeconds(60), CancellationToken.None);
                var rabbitmq = await RabbitMqNode.StartAsync(new RabbitMqNodeOptions
                {
                    Directory = Path.Combine(folder, "rabbitmq"), AmqpPort = TestPorts.Free(), AmqpsPort = TestPorts.Free(), DistributionPort = TestPorts.Free(),
                    EpmdPort = TestPorts.Free(), Tls = tls,
                }, log: null, TimeSpan.FromSeconds(120), CancellationToken.None);
                return new TlsBrokers(redis, nats, rabbitmq);
            }
            catch
            {
                nats?.Dispose();
                redis.Dispose();
                throw;
            }
        }

        public async ValueTask DisposeAsync()
        {
            await Task.WhenAll(Redis.StopAsync(CancellationToken.None), Nats.StopAsync(CancellationToken.None), RabbitMq.StopAsync(CancellationToken.None));
            Redis.Dispose();
            Nats.Dispose();
            RabbitMq.Dispose();
        }
    }
}
