using System.Net.WebSockets;
using IntegrationTasks.WebSockets;

namespace IntegrationTasks.Tests;

[TestClass]
[TestCategory("EndToEnd")]
public sealed class WebSocketTransferTests
{
    private static Task<RunningHostModule> StartAsync(TestDatabases databases, int maxFrameBytes = 64 << 20, int maxBatchRecords = 100_000, int maxConnections = 1000,
        int keepAliveSeconds = WebSocketProtocol.DefaultKeepAliveSeconds, int connectionTimeoutSeconds = SettingDefaults.ConnectionTimeoutSeconds) =>
        RunningHostModule.StartAsync(new WebSocketServer
        {
            MaxFrameBytes = maxFrameBytes, MaxBatchRecords = maxBatchRecords, MaxConnections = maxConnections, KeepAliveSeconds = keepAliveSeconds,
            ConnectionTimeoutSeconds = connectionTimeoutSeconds,
        }, databases, WebSocketProtocol.Path);

    private static string WebSocketUrl(int port) => $"ws://127.0.0.1:{port}{WebSocketProtocol.Path}";

    private static WebSocketClient Client(int port, TestDatabases databases, FakeBuildEngine engine, int totalBatches = 4, int batchSize = 250) =>
        new WebSocketClient { Uri = WebSocketUrl(port), MaxInFlight = 3 }.For(databases, engine, totalBatches, batchSize);

    [TestMethod]
    [DataRow("Sqlite", 1)]
    [DataRow("Sqlite", 3)]
    [DataRow("PostgreSql", 1)]
    public async Task WebSocketClient_moves_every_row_intact(string provider, int clients)
    {
        await using var databases = await TransferChecks.WithRecordsAsync(provider, 1000 * clients);
        await using var server = await StartAsync(databases);
        var engine = new FakeBuildEngine();
        var client = Client(server.Port, databases, engine, totalBatches: 4 * clients); // the batches are shared among the clients
        client.Clients = clients;
        await client.AssertMovesEveryRowAsync(engine, databases, 1000 * clients);
        // One line per client served, as the TCP servers print it.
        await Eventually.WaitUntilAsync(() => CountOf(server.Log, "requests answered") == clients, $"{clients} connection(s) reported finished", seen: () => server.Log);
        StringAssert.Contains(server.Log, "4 requests answered");
    }

    [TestMethod]
    public async Task A_connection_reset_mid_transfer_is_resumed_and_every_row_arrives_once()
    {
        await using var databases = await TransferChecks.WithRecordsAsync("Sqlite", 5000);
        await using var server = await StartAsync(databases);
        await RelayFaults.AssertResumedAfterResetAsync(databases, server.Port,
            (relayPort, engine) => Client(relayPort, databases, engine, totalBatches: 50, batchSize: 100));
    }

    [TestMethod]
    public async Task Bad_input_is_closed_with_a_close_code_and_a_coded_reason_and_a_good_client_is_still_served()
    {
        await using var databases = await TransferChecks.WithRecordsAsync("Sqlite", 1000);
        await using var server = await StartAsync(databases, maxFrameBytes: 64 * 1024, maxBatchRecords: 300);

        // A frame that declares more than MaxFrameBytes: refused before it is read, with 1009 and the code.
        var (status, reason) = await SendAndReadCloseAsync(server.Port, Header(100_000_000), WebSocketMessageType.Binary);
        Assert.AreEqual(WebSocketCloseStatus.MessageTooBig, status, reason);
        StringAssert.StartsWith(reason, ErrorCodes.FrameTooLarge + ": A frame declared 100,000,000 bytes");
        Assert.IsLessThanOrEqualTo(WebSocketProtocol.MaxCloseReasonBytes, System.Text.Encoding.UTF8.GetByteCount(reason!));
        // A text message where the protocol sends binary ones.
        (status, reason) = await SendAndReadCloseAsync(server.Port, "hello"u8.ToArray(), WebSocketMessageType.Text);
        Assert.AreEqual(WebSocketCloseStatus.InvalidPayloadData, status, reason);
        StringAssert.StartsWith(reason, ErrorCodes.MalformedMessage + ":");
        // A plain HTTP request to the WebSocket endpoint.
        using (var http = new HttpClient())
        {
            using var response = await http.GetAsync($"http://127.0.0.1:{server.Port}{WebSocketProtocol.Path}");
            Assert.AreEqual(HttpStatusCode.BadRequest, response.StatusCode);
            StringAssert.StartsWith(await response.Content.ReadAsStringAsync(), ErrorCodes.RequestRefused + ":");
        }
        // The client task: a batch over MaxBatchRecords is told with the server's code, received in the close frame.
        var refused = new FakeBuildEngine();
        Assert.IsFalse(await Task.Run(Client(server.Port, databases, refused, totalBatches: 2, batchSize: 500).Execute));
        Assert.IsTrue(refused.HasErrorCode(ErrorCodes.BatchTooLarge), refused.Log);
        StringAssert.Contains(refused.Log, "The server closed the WebSocket (1009 MessageTooBig)");
        // And a good client is served after all of it.
        var engine = new FakeBuildEngine();
        Assert.IsTrue(await Task.Run(Client(server.Port, databases, engine, totalBatches: 10, batchSize: 100).Execute), engine.Log);
        Assert.AreEqual(1000, (await new TransferVerifier(databases.Server, databases.Client).VerifyAsync(1000, CancellationToken.None)).Matched);
        // Each refusal is a coded warning in the server's log.
        StringAssert.Contains(server.Log, ErrorCodes.FrameTooLarge);
        StringAssert.Contains(server.Log, ErrorCodes.BatchTooLarge);
    }

    [TestMethod]
    public async Task A_client_over_the_connection_limit_is_refused_with_IT3008_and_the_one_served_goes_on()
    {
        await using var databases = await TransferChecks.WithRecordsAsync("Sqlite", 1000);
        await using var server = await StartAsync(databases, maxConnections: 1);
        using var holder = new ClientWebSocket();
        await holder.ConnectAsync(new Uri(WebSocketUrl(server.Port)), CancellationToken.None);

        var engine = new FakeBuildEngine();
        Assert.IsFalse(await Task.Run(Client(server.Port, databases, engine).Execute));
        Assert.IsTrue(engine.HasErrorCode(ErrorCodes.ServerBusy), engine.Log);

        // The held connection is still served: it asks for one batch and gets it, then ends the transfer.
        await holder.SendAsync(Request([1, 2, 3]), WebSocketMessageType.Binary, endOfMessage: true, CancellationToken.None);
        await holder.SendAsync(Header(0), WebSocketMessageType.Binary, endOfMessage: true, CancellationToken.None);
        var received = new MemoryStream();
        var buffer = new byte[64 * 1024];
        while (true)
        {
            var result = await holder.ReceiveAsync(buffer, CancellationToken.None).WaitAsync(TimeSpan.FromSeconds(30));
            if (result.MessageType == WebSocketMessageType.Close)
                break;
            received.Write(buffer, 0, result.Count);
            if (EndsWithEndMarker(received))
                break;
        }
        var reply = received.ToArray();
        var (length, _) = FrameFormat.Plain.ParseHeader(reply, int.MaxValue);
        var records = RecordXml.ReadResponse(new MemoryStream(reply, FrameFormat.Plain.HeaderSize, length), CancellationToken.None);
        CollectionAssert.AreEqual(new[] { 1, 2, 3 }, records.Select(r => r.Id).ToArray());
        await holder.CloseAsync(WebSocketCloseStatus.NormalClosure, null, CancellationToken.None);
    }

    [TestMethod]
    public async Task A_peer_that_asks_and_then_neither_reads_nor_answers_pings_is_dropped_and_a_good_client_is_still_served()
    {
        await using var databases = await TransferChecks.WithRecordsAsync("Sqlite", 20_000);
        await using var server = await StartAsync(databases, keepAliveSeconds: 1);

        // A peer no one here wrote: the upgrade by hand, then requests for every record, then nothing — no read, no pong.
        using var silent = await UpgradedByHandAsync(server.Port);
        var stream = silent.GetStream();
        for (var batch = 0; batch < 20; batch++)
            await stream.WriteAsync(MaskedBinaryMessage(Request(Enumerable.Range(batch * 1000 + 1, 1000).ToArray())));
        var since = System.Diagnostics.Stopwatch.StartNew();

        // The server pings each second and gives up on a peer whose pong has not come within a second more: it says so, coded.
        await Eventually.WaitUntilAsync(() => server.Log.Contains("Closed the connection", StringComparison.Ordinal), "the silent peer dropped",
            TimeSpan.FromSeconds(30), () => server.Log);
        StringAssert.Contains(server.Log, $"warning {ErrorCodes.ConnectionLost}: [Host (websocket)] ");
        var silentPort = ((IPEndPoint)silent.Client.LocalEndPoint!).Port;
        StringAssert.Contains(server.Log, $"Closed the connection from 127.0.0.1:{silentPort}");
        StringAssert.Contains(server.Log, "KeepAliveTimeout", "the keep-alive's own reason, not the socket's state after it");
        Assert.IsLessThan(20, since.Elapsed.TotalSeconds, "dropped within the keep-alive's time, not a long timeout's");
        // Its socket is closed: what the server had sent drains, then the stream ends (or is reset).
        var drained = new byte[1 << 20];
        try
        {
            while (await stream.ReadAsync(drained).AsTask().WaitAsync(TimeSpan.FromSeconds(30)) > 0)
            {
            }
        }
        catch (IOException)
        {
        }

        // Meanwhile the server serves everyone else.
        var engine = new FakeBuildEngine();
        Assert.IsTrue(await Task.Run(Client(server.Port, databases, engine, totalBatches: 20, batchSize: 1000).Execute), engine.Log);
        Assert.AreEqual(20_000, (await new TransferVerifier(databases.Server, databases.Client).VerifyAsync(20_000, CancellationToken.None)).Matched);
    }

    [TestMethod]
    [DataRow("idle", DisplayName = "a peer that reads but never answers a ping")]
    [DataRow("oversized", DisplayName = "a peer that declares a 2^40-byte message and goes silent")]
    public async Task A_peer_that_never_answers_pings_is_dropped_with_a_coded_line_never_IT9999(string peer)
    {
        await using var databases = await TransferChecks.WithRecordsAsync("Sqlite", 100);
        await using var server = await StartAsync(databases, keepAliveSeconds: 1);
        using var silent = await UpgradedByHandAsync(server.Port);
        var stream = silent.GetStream();
        if (peer == "oversized")
            await stream.WriteAsync(new byte[] { 0x82, 0x80 | 127, 0, 0, 1, 0, 0, 0, 0, 0, 1, 2, 3, 4 }); // FIN binary, masked, 2^40 bytes
        // It reads everything the server sends (the pings) and answers nothing.
        var scrap = new byte[4096];
        var reading = Task.Run(async () =>
        {
            try
            {
                while (await stream.ReadAsync(scrap) > 0)
                {
                }
            }
            catch (IOException)
            {
            }
        });
        var port = ((IPEndPoint)silent.Client.LocalEndPoint!).Port;
        await Eventually.WaitUntilAsync(() => server.Log.Contains($"from 127.0.0.1:{port}", StringComparison.Ordinal) && server.Log.Contains("KeepAliveTimeout", StringComparison.Ordinal),
            "the silent peer dropped by the keep-alive", TimeSpan.FromSeconds(30), () => server.Log);
        await reading.WaitAsync(TimeSpan.FromSeconds(30));
        // One coded line for it, the keep-alive's (the socket is aborted: no close frame can follow).
        var coded = server.Log.Split('\n').Where(l => l.Contains($"127.0.0.1:{port}", StringComparison.Ordinal) && l.Contains(": [Host", StringComparison.Ordinal)).ToList();
        Assert.HasCount(1, coded, server.Log);
        StringAssert.StartsWith(coded[0], $"warning {ErrorCodes.ConnectionLost}: ");
        Assert.DoesNotContain(ErrorCodes.Unexpected, server.Log);
    }

    [TestMethod]
    public async Task A_WebSocket_idle_past_the_connection_timeout_is_closed_with_1008_and_the_coded_reason()
    {
        // It was reset: the stall guard's deadline cancelled the WebSocket's receive, which aborts it, so no close frame could follow.
        await using var databases = await TransferChecks.WithRecordsAsync("Sqlite", 100);
        await using var server = await StartAsync(databases, connectionTimeoutSeconds: 2);
        using var idle = new ClientWebSocket();
        await idle.ConnectAsync(new Uri(WebSocketUrl(server.Port)), CancellationToken.None);
        var buffer = new byte[4096];
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(30));
        var received = await idle.ReceiveAsync(buffer, timeout.Token);
        Assert.AreEqual((WebSocketMessageType.Close, WebSocketCloseStatus.PolicyViolation), (received.MessageType, idle.CloseStatus), idle.CloseStatusDescription);
        StringAssert.StartsWith(idle.CloseStatusDescription, ErrorCodes.ConnectionStalled + ":");
        await idle.CloseOutputAsync(WebSocketCloseStatus.NormalClosure, null, timeout.Token);
        StringAssert.Contains(server.Log, $"warning {ErrorCodes.ConnectionStalled}: [Host (websocket)] Closed the connection from 127.0.0.1:");

        // And a client that asks is served.
        var engine = new FakeBuildEngine();
        Assert.IsTrue(await Task.Run(Client(server.Port, databases, engine, totalBatches: 4, batchSize: 25).Execute), engine.Log);
    }

    [TestMethod]
    [TestCategory("Unit")]
    public void A_close_reason_fits_a_close_frame_and_keeps_its_code()
    {
        var reason = WebSocketProtocol.CloseReason(new IntegrationException(ErrorCodes.FrameTooLarge, new string('é', 200)));
        Assert.IsLessThanOrEqualTo(WebSocketProtocol.MaxCloseReasonBytes, System.Text.Encoding.UTF8.GetByteCount(reason));
        StringAssert.StartsWith(reason, "IT2101: éé");
        StringAssert.EndsWith(reason, "…");
        Assert.AreEqual("IT3007: short", WebSocketProtocol.CloseReason(new IntegrationException(ErrorCodes.ConnectionStalled, "short")));
        Assert.AreEqual(WebSocketCloseStatus.MessageTooBig, WebSocketProtocol.CloseStatusOf(ErrorCodes.BatchTooLarge));
        Assert.AreEqual(WebSocketCloseStatus.InternalServerError, WebSocketProtocol.CloseStatusOf(ErrorCodes.DatabaseFailure));
    }

    private static async Task<(WebSocketCloseStatus? Status, string? Reason)> SendAndReadCloseAsync(int port, byte[] message, WebSocketMessageType type)
    {
        using var socket = new ClientWebSocket();
        await socket.ConnectAsync(new Uri(WebSocketUrl(port)), CancellationToken.None);
        await socket.SendAsync(message, type, endOfMessage: true, CancellationToken.None);
        var buffer = new byte[4096];
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(30));
        while ((await socket.ReceiveAsync(buffer, timeout.Token)).MessageType != WebSocketMessageType.Close)
        {
        }
        return (socket.CloseStatus, socket.CloseStatusDescription);
    }

    private static byte[] Header(int length)
    {
        var header = new byte[FrameFormat.Plain.HeaderSize];
        FrameFormat.Plain.WriteHeader(header, length, 0);
        return header;
    }

    private static byte[] Request(int[] ids)
    {
        using var buffer = new PooledBufferStream();
        FrameCodec.BeginFrame(buffer, FrameFormat.Plain);
        RecordXml.WriteRequest(buffer, ids);
        return FrameCodec.EndFrame(buffer, FrameFormat.Plain, 1).ToArray();
    }

    /// <summary>A TCP connection upgraded to a WebSocket by hand (RFC 6455 §4.1), its 101 answer read: a peer no one here wrote.</summary>
    private static async Task<System.Net.Sockets.TcpClient> UpgradedByHandAsync(int port)
    {
        var peer = new System.Net.Sockets.TcpClient();
        await peer.ConnectAsync(IPAddress.Loopback, port);
        var stream = peer.GetStream();
        await stream.WriteAsync(System.Text.Encoding.ASCII.GetBytes(
            $"GET {WebSocketProtocol.Path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
            "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"));
        // The 101 comes alone: the server sends nothing more before the peer's first frame or its first ping.
        var head = new byte[1024];
        var read = await stream.ReadAsync(head).AsTask().WaitAsync(TimeSpan.FromSeconds(30));
        StringAssert.StartsWith(System.Text.Encoding.ASCII.GetString(head, 0, read), "HTTP/1.1 101");
        return peer;
    }

    /// <summary>One binary WebSocket frame as a client must send it (RFC 6455 §5.3: masked).</summary>
    private static byte[] MaskedBinaryMessage(byte[] payload)
    {
        var frame = new MemoryStream();
        frame.WriteByte(0x82); // FIN, binary
        if (payload.Length < 126)
            frame.WriteByte((byte)(0x80 | payload.Length));
        else if (payload.Length <= ushort.MaxValue)
        {
            frame.WriteByte(0x80 | 126);
            frame.WriteByte((byte)(payload.Length >> 8));
            frame.WriteByte((byte)payload.Length);
        }
        else
        {
            frame.WriteByte(0x80 | 127);
            for (var shift = 56; shift >= 0; shift -= 8)
                frame.WriteByte((byte)((long)payload.Length >> shift));
        }
        byte[] mask = [0x12, 0x34, 0x56, 0x78];
        frame.Write(mask);
        for (var i = 0; i < payload.Length; i++)
            frame.WriteByte((byte)(payload[i] ^ mask[i % 4]));
        return frame.ToArray();
    }

    private static bool EndsWithEndMarker(MemoryStream received)
    {
        var bytes = received.ToArray();
        if (bytes.Length < FrameFormat.Plain.HeaderSize)
            return false;
        var (length, _) = FrameFormat.Plain.ParseHeader(bytes, int.MaxValue);
        return bytes.Length >= 2 * FrameFormat.Plain.HeaderSize + length;
    }

    private static int CountOf(string text, string part) => (text.Length - text.Replace(part, "", StringComparison.Ordinal).Length) / part.Length;
}
