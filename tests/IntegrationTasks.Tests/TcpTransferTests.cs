using System.Buffers.Binary;
using IntegrationTasks.Streams;

namespace IntegrationTasks.Tests;

[TestClass]
[TestCategory("EndToEnd")]
public sealed class TcpTransferTests
{
    private static TcpClientTask Client(TestDatabases databases, int port, int totalBatches, int batchSize, FakeBuildEngine engine,
        string generation = "TcpClient2")
    {
        var client = TcpGeneration.All[generation].NewClient();
        client.HostName = "127.0.0.1";
        client.Port = port;
        client.MaxInFlight = 3;
        return client.For(databases, engine, totalBatches, batchSize);
    }

    public static IEnumerable<object[]> GenerationsTimesProviders =>
        TcpGeneration.All.Keys.SelectMany(name => new[] { new object[] { name, "Sqlite" }, new object[] { name, "PostgreSql" } });

    [TestMethod]
    [DynamicData(nameof(GenerationsTimesProviders))]
    public async Task Every_generation_moves_every_row_intact(string generation, string provider)
    {
        await using var databases = await TransferChecks.WithRecordsAsync(provider, 5000);
        await using var server = new RunningTcpServer(databases.Server, TcpGeneration.All[generation]);

        var engine = new FakeBuildEngine();
        var client = Client(databases, server.Port, totalBatches: 20, batchSize: 250, engine, generation);
        Assert.IsTrue(client.Execute(), engine.Log);

        Assert.AreEqual(5000, client.Records);
        Assert.IsGreaterThan(0, client.ElapsedSeconds);
        Assert.IsGreaterThan(5000L * 100, client.BytesReceived); // a record is a few hundred bytes of XML
        Assert.IsGreaterThan(5000L * 5, client.BytesSent);
        var report = await new TransferVerifier(databases.Server, databases.Client).VerifyAsync(5000, CancellationToken.None);
        Assert.AreEqual(5000, report.Matched);
    }

    [TestMethod]
    public async Task Several_clients_are_served_at_once()
    {
        await using var databases = await TransferChecks.WithRecordsAsync("Sqlite", 2000);
        await using var server = new RunningTcpServer(databases.Server);
        using var folder = new TempDirectory("it-clients-");
        var clients = Enumerable.Range(0, 3).Select(i =>
        {
            var engine = new FakeBuildEngine();
            var task = new TcpClient2
            {
                BuildEngine = engine, ClientConnString = $"Data Source={folder}/client{i}.db", Port = server.Port,
                TotalBatches = 20, BatchSize = 100, TimeoutSeconds = 120,
            };
            return (engine, task, Database.Create(DatabaseProvider.Sqlite, task.ClientConnString));
        }).ToList();
        var results = await Task.WhenAll(clients.Select(c => Task.Run(c.task.Execute)));
        for (var i = 0; i < clients.Count; i++)
        {
            Assert.IsTrue(results[i], clients[i].engine.Log);
            await new TransferVerifier(databases.Server, clients[i].Item3).VerifyAsync(2000, CancellationToken.None);
        }
        Assert.AreEqual(3, server.Server.ConnectionsServed);
    }

    [TestMethod]
    public void A_missing_server_is_a_coded_error_not_a_hang()
    {
        using var databases = new DisposableSqlite();
        var port = TestPorts.Free();
        var engine = new FakeBuildEngine();
        var client = Client(databases.Value, port, 1, 10, engine);
        Assert.IsFalse(client.Execute());
        Assert.IsTrue(engine.HasErrorCode(ErrorCodes.ConnectionFailed), engine.Log);
        StringAssert.Contains(engine.Log, "-t:TcpServer2");
    }

    [TestMethod]
    public void Invalid_parameters_are_coded_errors()
    {
        using var databases = new DisposableSqlite();
        var engine = new FakeBuildEngine();
        var client = Client(databases.Value, 1, totalBatches: 0, batchSize: 10, engine);
        Assert.IsFalse(client.Execute());
        Assert.IsTrue(engine.HasErrorCode(ErrorCodes.InvalidParameter), engine.Log);

        engine = new FakeBuildEngine();
        client = Client(databases.Value, 1, 1, 10, engine);
        client.ClientProvider = "Oracle";
        Assert.IsFalse(client.Execute());
        Assert.IsTrue(engine.HasErrorCode(ErrorCodes.UnknownProvider), engine.Log);
    }

    // ---- bad clients: each one loses its connection, the server logs a coded warning and serves a good client ----

    private static readonly (string Name, Func<NetworkStream, FrameFormat, Task> Misbehave, string Code)[] BadClients =
    [
        ("garbage", (s, f) => s.WriteAsync(Encoding.ASCII.GetBytes("GET / HTTP/1.1\r\nHost: x\r\n\r\n")).AsTask(), "IT210"),
        ("oversized length", (s, f) => s.WriteAsync(Header(f, 1L << 40)).AsTask(), ErrorCodes.FrameTooLarge),
        ("negative length", (s, f) => s.WriteAsync(Header(f, -5)).AsTask(), ErrorCodes.InvalidFrameLength),
        ("malformed XML", (s, f) => s.WriteAsync(Frame(f, "<request><id>1</id>")).AsTask(), ErrorCodes.MalformedXml),
        ("bad id", (s, f) => s.WriteAsync(Frame(f, "<request><id>one</id></request>")).AsTask(), ErrorCodes.InvalidFieldValue),
        // One ten-byte ID over MaxBatchRecords (1,000 here): refused while read, before any lookup (a 4 MB request once made a 117 MB reply).
        ("too many ids", (s, f) => s.WriteAsync(Frame(f, "<request>" + string.Concat(Enumerable.Repeat("<id>1</id>", 1001)) + "</request>")).AsTask(),
            ErrorCodes.BatchTooLarge),
        ("disconnect mid-frame", (s, f) => ThenDisconnect(s, Header(f, 1000).Concat(new byte[10]).ToArray()), ErrorCodes.TruncatedFrame),
        ("disconnect mid-header", (s, f) => ThenDisconnect(s, new byte[3]), ErrorCodes.TruncatedFrame),
        ("disconnect without end marker", (s, f) => ThenDisconnect(s, Frame(f, "<request><id>1</id></request>")), ErrorCodes.TruncatedFrame),
        // Connections left open: the server drops them after its connection timeout (2 s here).
        ("stall mid-header", (s, f) => s.WriteAsync(new byte[3]).AsTask(), ErrorCodes.ConnectionStalled),
        ("stall mid-body", (s, f) => s.WriteAsync(Header(f, 1000).Concat(new byte[5]).ToArray()).AsTask(), ErrorCodes.ConnectionStalled),
        ("sit idle", (s, f) => Task.CompletedTask, ErrorCodes.ConnectionStalled),
    ];

    public static IEnumerable<object[]> ServersTimesBadClients =>
        TcpGeneration.ServerNames.SelectMany(server => BadClients.Select(bad => new object[] { server, bad.Name }));

    [DoNotParallelize] // a timeout of a second or two that a core busy with another class could miss
    [TestMethod]
    [DynamicData(nameof(ServersTimesBadClients))]
    public async Task A_bad_client_does_not_disturb_a_good_one(string generation, string name)
    {
        var (_, misbehave, code) = BadClients.Single(b => b.Name == name);
        var format = TcpGeneration.All[generation].Format;
        await using var databases = await TransferChecks.WithRecordsAsync("Sqlite", 3000);
        // One second: these tests run alone (DoNotParallelize), so the good client is never held back that long.
        await using var server = new RunningTcpServer(databases.Server, TcpGeneration.All[generation], maxFrameBytes: 1 << 20,
            connectionTimeout: TimeSpan.FromSeconds(1), maxBatchRecords: 1000);

        // The good client starts first and is mid-transfer while the bad one misbehaves.
        var engine = new FakeBuildEngine();
        var good = Task.Run(Client(databases, server.Port, totalBatches: 30, batchSize: 100, engine, generation).Execute);
        using (var bad = new TcpClient())
        {
            await bad.ConnectAsync(IPAddress.Loopback, server.Port);
            var stream = bad.GetStream();
            await misbehave(stream, format);
            // The server answers a protocol error by closing: reading reaches the end (after any responses).
            using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(30));
            var buffer = new byte[64 * 1024];
            while (await stream.ReadAsync(buffer, timeout.Token) > 0)
            {
            }
        }
        Assert.IsTrue(await good, engine.Log);
        await new TransferVerifier(databases.Server, databases.Client).VerifyAsync(3000, CancellationToken.None);

        await Eventually.WaitUntilAsync(() => server.Server.ConnectionsFailed > 0, "the server to count the bad connection as failed",
            seen: () => string.Join("\n", server.Log.Lines));
        var warning = server.Log.Lines.FirstOrDefault(l => l.StartsWith("warning ", StringComparison.Ordinal));
        Assert.IsNotNull(warning, $"{name}: no warning in {string.Join("\n", server.Log.Lines)}");
        StringAssert.StartsWith(warning, $"warning {code}", $"{name}: {warning}");

        // And the server still serves a new client afterwards.
        await databases.Client.EmptyAsync(RecordTable.Client, CancellationToken.None);
        engine = new FakeBuildEngine();
        Assert.IsTrue(Client(databases, server.Port, 1, 10, engine, generation).Execute(), engine.Log);
    }

    // ---- a client that stops reading, and one that reads slowly ----

    [DoNotParallelize] // a timeout of a second or two that a core busy with another class could miss
    [TestMethod]
    [DataRow("TcpClientSingleThreadTest")]
    [DataRow("TcpClient2")]
    [DataRow("TcpClientMultiThreadTest3")]
    [DataRow("TcpClientMultiThreadTest4")]
    [Timeout(120_000, CooperativeCancellation = true)]
    public async Task A_client_that_stops_reading_is_dropped_with_IT3007_and_the_others_are_served(string generation)
    {
        // It sent requests and never read a reply: the server blocked writing, stopped answering after 10–18 requests and kept
        // the connection for as long as the client liked (180 s and more), logging nothing.
        var format = TcpGeneration.All[generation].Format;
        await using var databases = await TransferChecks.WithRecordsAsync("Sqlite", 1000);
        await using var server = new RunningTcpServer(databases.Server, TcpGeneration.All[generation], connectionTimeout: TimeSpan.FromSeconds(1));
        using var bad = new TcpClient { ReceiveBufferSize = 64 * 1024 };
        await bad.ConnectAsync(IPAddress.Loopback, server.Port);
        var request = Frame(format, "<request>" + string.Concat(Enumerable.Range(1, 1000).Select(i => $"<id>{i}</id>")) + "</request>");
        // Far more reply (≈ 100 MB) than any buffer holds; sent in the background, as the server may stop reading requests too.
        var sending = Task.Run(async () =>
        {
            try
            {
                for (var i = 0; i < 300; i++)
                    await bad.GetStream().WriteAsync(request);
            }
            catch (IOException)
            {
                // the server dropped us
            }
        });
        var dropped = await WaitForLineAsync(server.Log, "warning IT3007", TimeSpan.FromSeconds(60));
        StringAssert.Contains(dropped, "(it stopped reading its replies)", string.Join("\n", server.Log.Lines));
        await sending.WaitAsync(TimeSpan.FromSeconds(30));

        var engine = new FakeBuildEngine();
        Assert.IsTrue(Client(databases, server.Port, 10, 100, engine, generation).Execute(), engine.Log);
    }

    [TestMethod]
    [DataRow("TcpClient2")]
    [DataRow("TcpClientMultiThreadTest3")]
    public async Task A_client_that_asked_and_then_reads_nothing_is_told_with_a_reset(string generation)
    {
        // One request whose reply is more than the kernel's buffers hold, then nothing: a graceful close kept the reply queued
        // (the socket in FIN-WAIT-1) and the client, reading later, got all of it and an end, never told it had been dropped.
        var format = TcpGeneration.All[generation].Format;
        await using var databases = await TransferChecks.WithRecordsAsync("Sqlite", 100_000);
        await using var server = new RunningTcpServer(databases.Server, TcpGeneration.All[generation], connectionTimeout: TimeSpan.FromSeconds(3));
        using var quiet = new TcpClient { ReceiveBufferSize = 64 * 1024 };
        await quiet.ConnectAsync(IPAddress.Loopback, server.Port);
        var stream = quiet.GetStream();
        await stream.WriteAsync(Frame(format, "<request>" + string.Concat(Enumerable.Range(1, 100_000).Select(i => $"<id>{i}</id>")) + "</request>"));
        // Dropped for not reading (whichever guard speaks first: the reply's writes, or the wait for its next request).
        var dropped = await WaitForLineAsync(server.Log, "warning IT3007", TimeSpan.FromSeconds(60));
        StringAssert.Contains(dropped, "(it stopped reading its replies)", string.Join("\n", server.Log.Lines));
        var reset = await Assert.ThrowsAsync<IOException>(async () =>
        {
            var buffer = new byte[64 * 1024];
            using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(30));
            while (await stream.ReadAsync(buffer, timeout.Token) > 0)
            {
            }
        });
        Assert.AreEqual(SocketError.ConnectionReset, (reset.InnerException as SocketException)?.SocketErrorCode, reset.ToString());
    }

    [DoNotParallelize] // a timeout of a second or two that a core busy with another class could miss
    [TestMethod]
    [Timeout(120_000, CooperativeCancellation = true)]
    public async Task A_reader_that_is_slow_but_moving_is_never_cut()
    {
        // 20,000 records (≈ 6.6 MB, more than the kernel's buffers hold) read 64 KB at a time with a pause after each, longer in all than
        // the 1 s timeout: what counts is that every slice the server writes gets through within it.
        var format = TcpGeneration.All["TcpClient2"].Format;
        await using var databases = await TransferChecks.WithRecordsAsync("Sqlite", 20_000);
        await using var server = new RunningTcpServer(databases.Server, connectionTimeout: TimeSpan.FromSeconds(1));
        using var slow = new TcpClient { ReceiveBufferSize = 64 * 1024 };
        await slow.ConnectAsync(IPAddress.Loopback, server.Port);
        var stream = slow.GetStream();
        await stream.WriteAsync(Frame(format, "<request>" + string.Concat(Enumerable.Range(1, 20_000).Select(i => $"<id>{i}</id>")) + "</request>"));
        var header = new byte[format.HeaderSize];
        await stream.ReadExactlyAsync(header);
        var length = BinaryPrimitives.ReadInt64LittleEndian(header);
        var buffer = new byte[64 * 1024];
        var watch = System.Diagnostics.Stopwatch.StartNew();
        for (long read = 0; read < length;)
        {
            var got = await stream.ReadAsync(buffer.AsMemory(0, (int)Math.Min(buffer.Length, length - read)));
            Assert.AreNotEqual(0, got, $"the server ended the connection after {read:N0} of {length:N0} bytes:\n{string.Join("\n", server.Log.Lines)}");
            read += got;
            await Task.Delay(20);
        }
        Assert.IsGreaterThan(1.0, watch.Elapsed.TotalSeconds, "the read took longer in all than the timeout");
        // Every byte arrived (the loop above); the write guard never fired. (Once the whole reply has left, a client that sends nothing
        // more for the timeout is idle, and may be dropped as such: that is the read guard, and the reply is complete by then.)
        Assert.IsFalse(server.Log.Lines.Any(l => l.Contains("stopped reading", StringComparison.Ordinal)), string.Join("\n", server.Log.Lines));
    }

    private static async Task<string> WaitForLineAsync(CapturingLog log, string text, TimeSpan timeout)
    {
        using var deadline = new CancellationTokenSource(timeout);
        try
        {
            while (true)
            {
                if (log.Lines.FirstOrDefault(l => l.Contains(text, StringComparison.Ordinal)) is { } line)
                    return line;
                await Task.Delay(20, deadline.Token);
            }
        }
        catch (OperationCanceledException)
        {
            throw new TimeoutException($"The server logged no \"{text}\" within {timeout.TotalSeconds} s:\n{string.Join("\n", log.Lines)}");
        }
    }

    // ---- a connection broken mid-transfer: the pipelined generations resume, the lock-step ones fail cleanly ----

    [TestMethod]
    [DataRow("TcpClient2")]
    [DataRow("TcpClientMultiThreadTest3")]
    [DataRow("TcpClientMultiThreadTest4")]
    public async Task A_connection_reset_mid_transfer_is_resumed_and_every_row_arrives_once(string generation)
    {
        await using var databases = await TransferChecks.WithRecordsAsync("Sqlite", 5000);
        await using var server = new RunningTcpServer(databases.Server, TcpGeneration.All[generation]);
        var (relay, relayPort, running) = await RelayFaults.ResettingAsync(server.Port, afterBytes: 400_000);
        await using (relay)
        {
            var engine = new FakeBuildEngine();
            var client = Client(databases, relayPort, totalBatches: 50, batchSize: 100, engine, generation);
            Assert.IsTrue(client.Execute(), engine.Log);
            Assert.IsTrue(relay.FaultInjected, "the relay reset the connection");
            Assert.AreEqual(1, client.Reconnects, engine.Log);
            StringAssert.Contains(engine.Log, "reconnecting");
            // Nothing lost, nothing twice: the batches committed before the reset were not asked for again.
            await new TransferVerifier(databases.Server, databases.Client).VerifyAsync(5000, CancellationToken.None);
        }
        await running;
    }

    // ---- the stream seam: the same generations over a Unix domain socket (Streams/: connectors, models, server host) ----

    [TestMethod]
    [DataRow("TcpClientSingleThreadTest")]
    [DataRow("TcpClient2")]
    [DataRow("TcpClientMultiThreadTest4")]
    public async Task A_generation_runs_unchanged_over_a_Unix_socket_and_every_row_arrives(string generation)
    {
        await using var databases = await TransferChecks.WithRecordsAsync("Sqlite", 2000);
        using var folder = new TempDirectory("it-unix-");
        var socket = Path.Combine(folder, "records.sock");
        await using (var server = new RunningTcpServer(databases.Server, TcpGeneration.All[generation], socketPath: socket))
        {
            Assert.AreEqual($"unix://{socket}", server.Server.Endpoint);
            var engine = new FakeBuildEngine();
            var client = Client(databases, port: 1, totalBatches: 20, batchSize: 100, engine, generation);
            client.Connector = "Unix";
            client.SocketPath = socket;
            Assert.IsTrue(client.Execute(), engine.Log);
            Assert.IsTrue(client.BytesReceived > 0, "bytes counted on the stream, whatever its connector");
            var report = await new TransferVerifier(databases.Server, databases.Client).VerifyAsync(2000, CancellationToken.None);
            Assert.IsTrue(report.Success, report.ToString());
            Assert.AreEqual(1, server.Server.ConnectionsServed);
        }
        Assert.IsFalse(File.Exists(socket), "the socket file goes with the server");
    }

    [TestMethod]
    public async Task A_Unix_socket_connection_cut_mid_transfer_by_the_relay_is_resumed_and_every_row_arrives_once()
    {
        await using var databases = await TransferChecks.WithRecordsAsync("Sqlite", 5000);
        using var folder = new TempDirectory("it-unix-");
        var socket = Path.Combine(folder, "records.sock");
        await using var server = new RunningTcpServer(databases.Server, TcpGeneration.All["TcpClient2"], socketPath: socket);
        var relayPath = Path.Combine(folder, "relay.sock");
        var (relay, running) = await RelayFaults.ResettingUnixAsync(socket, relayPath, afterBytes: 400_000);
        await using (relay)
        {
            var engine = new FakeBuildEngine();
            var client = Client(databases, port: 1, totalBatches: 50, batchSize: 100, engine);
            client.Connector = "Unix";
            client.SocketPath = relayPath;
            Assert.IsTrue(client.Execute(), engine.Log);
            Assert.IsTrue(relay.FaultInjected, "the relay cut the connection");
            Assert.AreEqual(1, client.Reconnects, engine.Log);
            var report = await new TransferVerifier(databases.Server, databases.Client).VerifyAsync(5000, CancellationToken.None);
            Assert.IsTrue(report.Success, report.ToString());
        }
        await running;
    }

    [TestMethod]
    public async Task A_Unix_socket_a_live_server_holds_is_a_coded_error_and_a_stale_one_is_replaced()
    {
        await using var databases = TestDatabases.Sqlite();
        using var folder = new TempDirectory("it-unix-");
        var socket = Path.Combine(folder, "records.sock");
        await using (var server = new RunningTcpServer(databases.Server, socketPath: socket))
        {
            var taken = Assert.ThrowsExactly<IntegrationException>(() => new UnixStreamListener(socket));
            Assert.AreEqual(ErrorCodes.PortInUse, taken.Code);
        }
        // A file no server answers on (one that died): taken over.
        await File.WriteAllTextAsync(socket, "");
        await using var listener = new UnixStreamListener(socket);
        Assert.AreEqual($"unix://{socket}", listener.Endpoint);
        var engine = new FakeBuildEngine();
        var client = Client(databases, port: 1, totalBatches: 2, batchSize: 10, engine);
        client.Connector = "Unicorn";
        Assert.IsFalse(client.Execute());
        StringAssert.Contains(engine.Log, "IT1001: Connector must be Tcp or Unix (was 'Unicorn').");
    }

    [TestMethod]
    public async Task A_lock_step_client_fails_with_its_code_and_no_partial_batch_when_the_connection_is_reset()
    {
        await using var databases = await TransferChecks.WithRecordsAsync("Sqlite", 5000);
        await using var server = new RunningTcpServer(databases.Server, TcpGeneration.All["TcpClientSingleThreadTest"]);
        var (relay, relayPort, running) = await RelayFaults.ResettingAsync(server.Port, afterBytes: 400_000);
        await using (relay)
        {
            var engine = new FakeBuildEngine();
            var client = Client(databases, relayPort, totalBatches: 50, batchSize: 100, engine, "TcpClientSingleThreadTest");
            Assert.IsFalse(client.Execute());
            Assert.IsTrue(engine.HasErrorCode(ErrorCodes.ConnectionLost), engine.Log);
            var rows = await databases.Client.CountAsync(RecordTable.Client, CancellationToken.None);
            Assert.IsTrue(rows > 0 && rows < 5000 && rows % 100 == 0, $"{rows} rows: only whole batches");
        }
        await running;
    }


    private static async Task ThenDisconnect(NetworkStream stream, byte[] bytes)
    {
        await stream.WriteAsync(bytes);
        stream.Socket.Shutdown(SocketShutdown.Send);
    }

    private static byte[] Header(FrameFormat format, long length)
    {
        var header = new byte[format.HeaderSize];
        BinaryPrimitives.WriteInt64LittleEndian(header, length);
        if (format.CarriesBatchId)
            BinaryPrimitives.WriteInt32LittleEndian(header.AsSpan(8), 1);
        return header;
    }

    private static byte[] Frame(FrameFormat format, string xml)
    {
        var payload = Encoding.UTF8.GetBytes(xml);
        return [.. Header(format, payload.Length), .. payload];
    }
}
