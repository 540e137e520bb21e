using IntegrationTasks.Http;

namespace IntegrationTasks.Tests;

[TestClass]
[TestCategory("EndToEnd")]
public sealed class HttpTransferTests
{
    private static HttpRequest Client(TestDatabases databases, string url, bool flush, FakeBuildEngine engine, int totalBatches = 10, int batchSize = 300) =>
        new HttpRequest { Uri = url, Flush = flush }.For(databases, engine, totalBatches, batchSize, timeoutSeconds: 60);

    [TestMethod]
    [DataRow("Sqlite", true)]
    [DataRow("Sqlite", false)]
    [DataRow("PostgreSql", true)]
    [DataRow("PostgreSql", false)]
    public async Task HttpRequest_moves_every_row_intact_and_the_server_stops_cleanly(string provider, bool flush)
    {
        await using var databases = await TransferChecks.WithRecordsAsync(provider, 3000);
        int port;
        await using (var server = await RunningHttpServer.StartAsync(databases))
        {
            port = server.Port;
            var engine = new FakeBuildEngine();
            var client = Client(databases, server.Url, flush, engine);
            Assert.IsTrue(await Task.Run(client.Execute), engine.Log);
            Assert.AreEqual(3000, client.Records);
            Assert.IsGreaterThan(3000L * 100, client.BytesReceived);
            Assert.IsGreaterThan(3000L * 5, client.BytesSent);
            await new TransferVerifier(databases.Server, databases.Client).VerifyAsync(3000, CancellationToken.None);
        }
        using var listener = new TcpListener(IPAddress.Loopback, port);
        listener.Start(); // the host process is gone and its port is free
    }

    [TestMethod]
    [DataRow(true)]
    [DataRow(false)]
    public async Task A_response_reset_mid_transfer_is_resumed_and_every_row_arrives_once(bool flush)
    {
        await using var databases = await TransferChecks.WithRecordsAsync("Sqlite", 5000);
        await using var server = await RunningHttpServer.StartAsync(databases);
        var (relay, relayPort, running) = await RelayFaults.ResettingAsync(server.Port, afterBytes: 400_000);
        await using (relay)
        {
            var engine = new FakeBuildEngine();
            var client = Client(databases, $"http://127.0.0.1:{relayPort}{HttpRecordsProtocol.Path}", flush, engine, totalBatches: 50, batchSize: 100);
            Assert.IsTrue(await Task.Run(client.Execute), engine.Log);
            Assert.IsTrue(relay.FaultInjected, "the relay reset the connection");
            Assert.AreEqual(1, client.Reconnects, engine.Log);
            StringAssert.Contains(engine.Log, "reconnecting");
            // The second POST asked only for the batches not committed: nothing twice, nothing missing.
            await new TransferVerifier(databases.Server, databases.Client).VerifyAsync(5000, CancellationToken.None);
        }
        await running;
    }

    [DoNotParallelize] // a timeout of a second or two that a core busy with another class could miss
    [TestMethod]
    public async Task A_connection_stalled_mid_request_is_dropped_with_IT3007_and_a_flowing_transfer_is_not()
    {
        await using var databases = await TransferChecks.WithRecordsAsync("Sqlite", 20_000);
        // One second of silence either way is a stall here: short enough for a test, and a transfer longer than that still flows.
        await using var server = await RunningHostModule.StartAsync(new HttpServer { ConnectionTimeoutSeconds = 1 }, databases, HttpRecordsProtocol.Path);
        using (var stalled = new TcpClient())
        {
            await stalled.ConnectAsync(IPAddress.Loopback, server.Port);
            var stream = stalled.GetStream();
            // Headers promise 1,000 bytes of body; 20 come, and the connection is left open.
            await stream.WriteAsync(Encoding.ASCII.GetBytes("POST /records HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n<request><id>1</id>"));
            var watch = System.Diagnostics.Stopwatch.StartNew();
            using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(15));
            var buffer = new byte[4096];
            try
            {
                while (await stream.ReadAsync(buffer, timeout.Token) > 0)
                {
                }
            }
            catch (IOException)
            {
                // aborted: a reset is how the guard closes it
            }
            Assert.IsLessThan(10.0, watch.Elapsed.TotalSeconds, "dropped by the guard, not left open");
        }
        await Eventually.WaitUntilAsync(() => server.Log.Contains("IT3007", StringComparison.Ordinal), "the stall guard's IT3007", seen: () => server.Log);
        StringAssert.Contains(server.Log, "nothing moved either way for 1 s");

        var engine = new FakeBuildEngine();
        var client = Client(databases, server.Url, flush: true, engine, totalBatches: 20, batchSize: 1000);
        Assert.IsTrue(await Task.Run(client.Execute), engine.Log);
        await new TransferVerifier(databases.Server, databases.Client).VerifyAsync(20_000, CancellationToken.None);
    }

    [DoNotParallelize] // a timeout of a second or two that a core busy with another class could miss
    [TestMethod]
    public async Task Connections_Kestrel_drops_itself_are_each_one_coded_warning_a_slowloris_and_an_HTTP2_protocol_error()
    {
        await using var databases = await TransferChecks.WithRecordsAsync("Sqlite", 100);
        await using var server = await RunningHostModule.StartAsync(new HttpServer { ConnectionTimeoutSeconds = 2 }, databases, HttpRecordsProtocol.Path);

        // Slowloris: a header byte every 300 ms keeps the connection busy but never completes the headers; Kestrel answers 408
        // (at RequestHeadersTimeout, now the connection timeout) and that was not logged.
        using (var slow = new TcpClient())
        {
            await slow.ConnectAsync(IPAddress.Loopback, server.Port);
            var stream = slow.GetStream();
            var answer = new StringBuilder();
            using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(20));
            var reading = Task.Run(async () =>
            {
                var buffer = new byte[4096];
                try
                {
                    for (int n; (n = await stream.ReadAsync(buffer, timeout.Token)) > 0;)
                        answer.Append(Encoding.ASCII.GetString(buffer, 0, n));
                }
                catch (IOException)
                {
                }
            });
            var header = Encoding.ASCII.GetBytes("POST /records HTTP/1.1\r\nHost: x\r\nX-Slow: " + new string('a', 200));
            foreach (var b in header)
            {
                if (reading.IsCompleted)
                    break;
                try
                {
                    await stream.WriteAsync(new[] { b }, timeout.Token);
                }
                catch (IOException)
                {
                    break;
                }
                await Task.Delay(300, timeout.Token);
            }
            await reading;
            StringAssert.StartsWith(answer.ToString(), "HTTP/1.1 408");
        }

        // The gRPC endpoint (HTTP/2 with prior knowledge), then a SETTINGS frame whose length is no multiple of 6: a connection
        // error, answered GOAWAY, and not logged either.
        await using var grpc = await RunningHostModule.StartAsync(new IntegrationTasks.Grpc.GrpcServer(), databases, "");
        using (var h2 = new TcpClient())
        {
            await h2.ConnectAsync(IPAddress.Loopback, grpc.Port);
            var stream = h2.GetStream();
            await stream.WriteAsync(Encoding.ASCII.GetBytes("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"));
            await stream.WriteAsync(new byte[] { 0, 0, 5, 0x4, 0, 0, 0, 0, 0, 1, 2, 3, 4, 5 });
            using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(10));
            var buffer = new byte[4096];
            try
            {
                while (await stream.ReadAsync(buffer, timeout.Token) > 0)
                {
                }
            }
            catch (IOException)
            {
            }
        }

        await Eventually.WaitUntilAsync(() => server.Log.Contains("Reading the request headers timed out", StringComparison.Ordinal)
            && grpc.Log.Contains("HTTP/2; a GOAWAY", StringComparison.Ordinal), "a coded line for the 408 and one for the GOAWAY", seen: () => $"{server.Log}\n{grpc.Log}");
        Assert.ContainsSingle(server.Log.Split('\n').Where(l => l.StartsWith("warning IT3007:", StringComparison.Ordinal)
            && l.Contains("Reading the request headers timed out", StringComparison.Ordinal)), server.Log);
        Assert.ContainsSingle(grpc.Log.Split('\n').Where(l => l.StartsWith("warning IT2001:", StringComparison.Ordinal)
            && l.Contains("HTTP/2; a GOAWAY", StringComparison.Ordinal)), grpc.Log);
    }

    private static readonly (string Name, Func<int, Task<string>> Misbehave, string Expected)[] BadClients =
    [
        ("garbage body", port => PostAsync(port, "garbage"), "400 IT2001"),
        ("truncated XML", port => PostAsync(port, "<request><id>1</id>"), "400 IT2001"),
        ("bad id", port => PostAsync(port, "<request><id>one</id></request>"), "400 IT2002"),
        ("oversized body", port => PostAsync(port, "<request>" + string.Concat(Enumerable.Repeat("<id>1</id>", 5000)) + "</request>"), "413 IT2101"),
        ("body shorter than its length", port => RawAsync(port, "POST /records HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n<request>", readReply: false), ""),
        ("disconnect mid-response", port => RawAsync(port, Request("<request>" + string.Concat(Enumerable.Range(1, 3000).Select(i => $"<id>{i}</id>")) + "</request>"), readReply: false), ""),
        ("not HTTP", port => RawAsync(port, "\u0000\u0001\u0002 hello\r\n\r\n", readReply: true), ""),
    ];

    public static IEnumerable<object[]> BadClientNames => BadClients.Select(b => new object[] { b.Name });

    [TestMethod]
    [DynamicData(nameof(BadClientNames))]
    public async Task A_bad_client_gets_a_coded_status_and_the_server_keeps_serving(string name)
    {
        var (_, misbehave, expected) = BadClients.Single(b => b.Name == name);
        await using var databases = await TransferChecks.WithRecordsAsync("Sqlite", 3000);
        await using var server = await RunningHttpServer.StartAsync(databases, maxRequestBytes: 20_000);

        var reply = await misbehave(server.Port);
        if (expected.Length > 0)
            StringAssert.StartsWith(reply, expected, $"{name}: {reply}");

        var engine = new FakeBuildEngine();
        Assert.IsTrue(await Task.Run(Client(databases, server.Url, flush: true, engine, 2, 500).Execute), engine.Log);
        await new TransferVerifier(databases.Server, databases.Client).VerifyAsync(1000, CancellationToken.None);
    }

    [TestMethod]
    public async Task A_request_over_the_limit_fails_the_client_with_IT2101()
    {
        await using var databases = TestDatabases.Sqlite();
        await using var server = await RunningHttpServer.StartAsync(databases, maxRequestBytes: 1000);
        var engine = new FakeBuildEngine();
        Assert.IsFalse(await Task.Run(Client(databases, server.Url, true, engine).Execute));
        Assert.IsTrue(engine.HasErrorCode(ErrorCodes.FrameTooLarge), engine.Log);
        StringAssert.Contains(engine.Log, "413");
    }

    [TestMethod]
    public async Task Without_a_server_the_client_fails_clearly()
    {
        await using var databases = TestDatabases.Sqlite();
        var engine = new FakeBuildEngine();
        Assert.IsFalse(await Task.Run(Client(databases, $"http://127.0.0.1:{TestPorts.Free()}/records", true, engine).Execute));
        Assert.IsTrue(engine.HasErrorCode(ErrorCodes.ConnectionFailed), engine.Log);
        StringAssert.Contains(engine.Log, "-t:HttpServer");
    }

    private static string Request(string body) =>
        $"POST /records HTTP/1.1\r\nHost: x\r\nFlush: true\r\nContent-Type: text/xml\r\nContent-Length: {Encoding.UTF8.GetByteCount(body)}\r\n\r\n{body}";

    /// <summary>A POST through HttpClient; returns "status body".</summary>
    private static async Task<string> PostAsync(int port, string body)
    {
        using var client = new HttpClient();
        using var response = await client.PostAsync($"http://127.0.0.1:{port}/records", new StringContent(body, Encoding.UTF8, "text/xml"));
        return $"{(int)response.StatusCode} {await response.Content.ReadAsStringAsync()}";
    }

    /// <summary>Raw bytes on a socket, then a hang-up: with readReply, after reading what the server says; without, at once.</summary>
    private static async Task<string> RawAsync(int port, string text, bool readReply)
    {
        using var socket = new TcpClient();
        await socket.ConnectAsync(IPAddress.Loopback, port);
        var stream = socket.GetStream();
        await stream.WriteAsync(Encoding.UTF8.GetBytes(text));
        if (!readReply)
        {
            var some = new byte[100];
            if (text.Contains("Content-Length: 1000", StringComparison.Ordinal) is false)
                await stream.ReadAtLeastAsync(some, 1, throwOnEndOfStream: false); // the response has started
            socket.Client.LingerState = new LingerOption(true, 0); // reset, not a polite close
            return "";
        }
        using var reader = new StreamReader(stream);
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(10));
        return await reader.ReadToEndAsync(timeout.Token);
    }
}
