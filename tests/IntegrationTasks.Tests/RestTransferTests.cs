namespace IntegrationTasks.Tests;

[TestClass]
[TestCategory("EndToEnd")]
public sealed class RestTransferTests
{
    private static Task<RunningHostModule> StartAsync(TestDatabases databases, string httpVersion = "Http1", int maxBatchRecords = 100_000,
        int connectionTimeoutSeconds = SettingDefaults.ConnectionTimeoutSeconds) =>
        RunningHostModule.StartAsync(new RestServer { HttpVersion = httpVersion, MaxBatchRecords = maxBatchRecords, ConnectionTimeoutSeconds = connectionTimeoutSeconds },
            databases, RestProtocol.Path);

    private static RestJson Client(string url, TestDatabases databases, FakeBuildEngine engine, string httpVersion = "Http1", int totalBatches = 4, int batchSize = 250) =>
        new RestJson { Uri = url, HttpVersion = httpVersion, MaxInFlight = 3 }.For(databases, engine, totalBatches, batchSize);

    [TestMethod]
    [DataRow("Sqlite", "Http1", 1)]
    [DataRow("Sqlite", "Http2", 1)]
    [DataRow("Sqlite", "Http1", 3)]
    [DataRow("PostgreSql", "Http1", 1)]
    public async Task RestJson_moves_every_row_intact(string provider, string httpVersion, int clients)
    {
        // The sample data holds what breaks naive formats (CR LF, tabs, quotes, non-ASCII, double.MaxValue, the smallest subnormal,
        // afternoon timestamps to the tick): the verification compares every value exactly.
        await using var databases = await TransferChecks.WithRecordsAsync(provider, 1000 * clients);
        await using var server = await StartAsync(databases, httpVersion);
        var engine = new FakeBuildEngine();
        var client = Client(server.Url, databases, engine, httpVersion, totalBatches: 4 * clients); // the batches are shared among the clients
        client.Clients = clients;
        await client.AssertMovesEveryRowAsync(engine, databases, 1000 * clients);
    }

    [TestMethod]
    public async Task A_connection_reset_mid_transfer_is_resumed_and_every_row_arrives_once()
    {
        await using var databases = await TransferChecks.WithRecordsAsync("Sqlite", 5000);
        await using var server = await StartAsync(databases);
        // GETs at once over several pooled connections: the reset breaks one, which may fail more than one attempt's batches.
        await RelayFaults.AssertResumedAfterResetAsync(databases, server.Port,
            (relayPort, engine) => Client($"http://127.0.0.1:{relayPort}{RestProtocol.Path}", databases, engine, totalBatches: 50, batchSize: 100), reconnects: null);
    }

    [TestMethod]
    public async Task Curl_reads_the_records_and_the_OpenAPI_document_and_bad_requests_get_coded_problems()
    {
        await using var databases = await TransferChecks.WithRecordsAsync("Sqlite", 20);
        await using var server = await StartAsync(databases, maxBatchRecords: 10);
        var baseUrl = $"http://127.0.0.1:{server.Port}";

        // curl, a client no one here wrote, and JSON read without the suite's serializer: every value as the database holds it.
        var (status, body) = Curl($"{baseUrl}{RestProtocol.Path}?firstId=1&count=10");
        Assert.AreEqual("200", status, body);
        using (var json = JsonDocument.Parse(body))
        {
            var records = json.RootElement.EnumerateArray().ToList();
            Assert.HasCount(10, records);
            var nonAscii = 0;
            await using var lookup = await new RecordSource(databases.Server, ServerWork.PerRecord).OpenLookupAsync(CancellationToken.None);
            foreach (var element in records)
            {
                var id = element.GetProperty("id").GetInt32();
                var expected = await lookup.FindAsync(id, CancellationToken.None);
                Assert.IsNotNull(expected);
                Assert.AreEqual(expected.Desc, element.GetProperty("desc").GetString());
                // Non-ASCII text travels as UTF-8, not as \uXXXX escapes (shorter, cheaper to write and read).
                foreach (var word in expected.Desc.Split(' ').Where(w => w.Any(c => c > 127 && !char.IsSurrogate(c))))
                    StringAssert.Contains(body, word, $"record {id}");
                nonAscii += expected.Desc.Any(c => c > 127) ? 1 : 0;
                Assert.AreEqual(BitConverter.DoubleToInt64Bits(expected.Value), BitConverter.DoubleToInt64Bits(element.GetProperty("value").GetDouble()), $"record {id}");
                Assert.AreEqual(expected.CreationDate.Ticks, DateTime.Parse(element.GetProperty("creationDate").GetString()!, CultureInfo.InvariantCulture,
                    DateTimeStyles.RoundtripKind).Ticks, $"record {id}");
                Assert.AreEqual(expected.StringField1, element.GetProperty("stringField1").ValueKind == JsonValueKind.Null ? null : element.GetProperty("stringField1").GetString());
            }
            Assert.IsGreaterThan(0, nonAscii, "the data has non-ASCII text to check");
        }

        // The OpenAPI document names the operation, its two parameters and its answers.
        (status, body) = Curl($"{baseUrl}{RestProtocol.OpenApiPath}");
        Assert.AreEqual("200", status, body);
        using (var openApi = JsonDocument.Parse(body))
        {
            var get = openApi.RootElement.GetProperty("paths").GetProperty(RestProtocol.Path).GetProperty("get");
            Assert.AreEqual("GetRecords", get.GetProperty("operationId").GetString());
            CollectionAssert.AreEquivalent(new[] { "firstId", "count" },
                get.GetProperty("parameters").EnumerateArray().Select(p => p.GetProperty("name").GetString()).ToArray());
            Assert.IsTrue(get.GetProperty("responses").TryGetProperty("200", out _) && get.GetProperty("responses").TryGetProperty("400", out _), get.ToString());
            // The record's numbers are numbers: one type each, never "or string" (what the service writes, and what a generated client gets).
            var record = openApi.RootElement.GetProperty("components").GetProperty("schemas").EnumerateObject()
                .Single(s => s.Value.TryGetProperty("properties", out var p) && p.TryGetProperty("creationDate", out _)).Value.GetProperty("properties");
            Assert.AreEqual(("integer", "int32", "number", "double"), (record.GetProperty("id").GetProperty("type").ToString(), record.GetProperty("id").GetProperty("format").GetString(),
                record.GetProperty("value").GetProperty("type").ToString(), record.GetProperty("value").GetProperty("format").GetString()), record.ToString());
            // Each parameter a required int32 within its limits; and a request made from those alone is served.
            var limits = new Dictionary<string, (long Minimum, long Maximum)>();
            foreach (var parameter in get.GetProperty("parameters").EnumerateArray())
            {
                var schema = parameter.GetProperty("schema");
                Assert.AreEqual((true, "integer", "int32"), (parameter.GetProperty("required").GetBoolean(), schema.GetProperty("type").GetString(),
                    schema.GetProperty("format").GetString()), parameter.ToString());
                limits[parameter.GetProperty("name").GetString()!] = (schema.GetProperty("minimum").GetInt64(), schema.GetProperty("maximum").GetInt64());
            }
            Assert.AreEqual((1L, int.MaxValue, 1L, 10L), (limits["firstId"].Minimum, limits["firstId"].Maximum, limits["count"].Minimum, limits["count"].Maximum));
            (status, body) = Curl($"{baseUrl}{RestProtocol.Path}?firstId={limits["firstId"].Minimum}&count={limits["count"].Maximum}");
            Assert.AreEqual("200", status, body);
            CollectionAssert.AreEqual(Enumerable.Range(1, 10).ToArray(), JsonDocument.Parse(body).RootElement.EnumerateArray().Select(r => r.GetProperty("id").GetInt32()).ToArray());
        }

        // The last ID is a range like any other (no record has it: an empty array); a number with a trailing NUL is not a number.
        (status, body) = Curl($"{baseUrl}{RestProtocol.Path}?firstId=2147483647&count=1");
        Assert.AreEqual(("200", 0), (status, JsonDocument.Parse(body).RootElement.GetArrayLength()), body);
        (status, body) = Curl($"{baseUrl}{RestProtocol.Path}?firstId=1&count=5%00");
        Assert.AreEqual("400", status, body);
        StringAssert.StartsWith(JsonDocument.Parse(body).RootElement.GetProperty("detail").GetString(), ErrorCodes.InvalidParameter + ":");
        StringAssert.Contains(JsonDocument.Parse(body).RootElement.GetProperty("detail").GetString(), "'5\\u0000'", "what the client sent, escaped");

        // Over the batch limit, and not a number: 400 with a problem whose detail is the coded error.
        (status, body) = Curl($"{baseUrl}{RestProtocol.Path}?firstId=1&count=11");
        Assert.AreEqual("400", status, body);
        StringAssert.StartsWith(JsonDocument.Parse(body).RootElement.GetProperty("detail").GetString(), ErrorCodes.BatchTooLarge + ": count must be between 1 and 10");
        (status, body) = Curl($"{baseUrl}{RestProtocol.Path}?firstId=one&count=5");
        Assert.AreEqual("400", status, body);
        StringAssert.StartsWith(JsonDocument.Parse(body).RootElement.GetProperty("detail").GetString(), ErrorCodes.InvalidParameter + ":");
        StringAssert.Contains(server.Log, ErrorCodes.BatchTooLarge);

        // Another method or another path: the framework's 405 and 404 as problems with the coded detail too, each a coded line.
        foreach (var (url, options, expected) in new[] { ($"{baseUrl}{RestProtocol.Path}", new[] { "-X", "POST" }, "405"), ($"{baseUrl}/api/nothing", [], "404") })
        {
            (status, body) = Curl(url, options);
            Assert.AreEqual(expected, status, body);
            using var problem = JsonDocument.Parse(body);
            Assert.AreEqual(int.Parse(expected, CultureInfo.InvariantCulture), problem.RootElement.GetProperty("status").GetInt32());
            StringAssert.StartsWith(problem.RootElement.GetProperty("detail").GetString(), ErrorCodes.RequestRefused + ":");
            await Eventually.WaitUntilAsync(() => server.Log.Split('\n').Any(l => l.StartsWith($"warning {ErrorCodes.RequestRefused}: ", StringComparison.Ordinal)
                                                                               && l.Contains($" with {expected}: ", StringComparison.Ordinal)),
                $"the coded line of the {expected}", TimeSpan.FromSeconds(10), () => server.Log);
        }

        // The client task reports the server's code, and a good client is served after it all.
        var refused = new FakeBuildEngine();
        Assert.IsFalse(await Task.Run(Client(server.Url, databases, refused, totalBatches: 1, batchSize: 20).Execute));
        Assert.IsTrue(refused.HasErrorCode(ErrorCodes.BatchTooLarge), refused.Log);
        var engine = new FakeBuildEngine();
        Assert.IsTrue(await Task.Run(Client(server.Url, databases, engine, totalBatches: 2, batchSize: 10).Execute), engine.Log);
        Assert.IsTrue((await new TransferVerifier(databases.Server, databases.Client).VerifyAsync(20, CancellationToken.None)).Success);
    }

    /// <summary>curl's status code and body (-s: no progress; -w: the status on a line of its own after the body).</summary>
    [TestMethod]
    [Timeout(300_000, CooperativeCancellation = true)]
    public async Task A_thousand_batch_requests_at_once_keep_the_host_s_memory_bounded_and_every_one_is_answered()
    {
        // 1,000 GETs of 1,000 records at once (hey, Debian's): every request used to read its batch at once, one database
        // connection and thread each, and the host's memory grew with them. Reads now take turns; the others wait holding little.
        await using var databases = await TransferChecks.WithRecordsAsync("Sqlite", 1000);
        await using var server = await StartAsync(databases);
        var (exitCode, stdout, stderr) = RepositoryPaths.Run("hey", ["-n", "1000", "-c", "1000", "-t", "240", $"{server.Url}?firstId=1&count=1000"]);
        Assert.AreEqual(0, exitCode, stderr);
        var answered = System.Text.RegularExpressions.Regex.Match(stdout, @"\[200\]\s+(\d+) responses");
        Assert.AreEqual("1000", answered.Groups[1].Value, stdout);

        var peak = server.PeakResidentBytes();
        Assert.IsLessThan(300L * 1024 * 1024, peak, $"peak resident memory {peak / 1024 / 1024} MB");
        ServerLogs.AssertEveryProblemCoded(server.Log);
    }

    [TestMethod]
    public async Task An_HTTP2_rapid_reset_flood_is_cut_with_coded_lines_only_and_a_good_client_is_still_served()
    {
        // Raw HTTP/2 frames (prior knowledge): 20,000 requests each reset at once, nothing read. Kestrel cuts the connection, and
        // wrote its "output operations maximum queue size" lines as uncoded crit.
        await using var databases = await TransferChecks.WithRecordsAsync("Sqlite", 1000);
        await using var server = await StartAsync(databases, httpVersion: "Http2");
        using (var flood = new System.Net.Sockets.TcpClient())
        {
            await flood.ConnectAsync(System.Net.IPAddress.Loopback, server.Port);
            var frames = new MemoryStream();
            frames.Write("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"u8);
            WriteFrame(frames, type: 4, flags: 0, stream: 0, []); // SETTINGS
            var path = System.Text.Encoding.ASCII.GetBytes($"{RestProtocol.Path}?firstId=1&count=1000");
            // HPACK: :method GET, :scheme http (static table), :path and :authority as literals.
            byte[] headers = [0x82, 0x86, 0x44, (byte)path.Length, .. path, 0x41, 9, .. "127.0.0.1"u8];
            for (var i = 0; i < 20_000; i++)
            {
                var stream = 1 + 2 * i;
                WriteFrame(frames, type: 1, flags: 0x5, stream, headers); // HEADERS, END_STREAM | END_HEADERS
                WriteFrame(frames, type: 3, flags: 0, stream, [0, 0, 0, 8]); // RST_STREAM, CANCEL
            }
            var socket = flood.GetStream();
            try
            {
                await socket.WriteAsync(frames.ToArray()).AsTask().WaitAsync(TimeSpan.FromSeconds(60));
                var buffer = new byte[64 * 1024];
                using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(60));
                while (await socket.ReadAsync(buffer, timeout.Token) > 0)
                {
                }
            }
            catch (IOException)
            {
                // cut by the server: what a flood gets
            }
        }
        await Eventually.WaitUntilAsync(() => server.Log.Split('\n').Any(l => l.StartsWith("warning IT", StringComparison.Ordinal) && l.Contains("HTTP/2; a GOAWAY or RST_STREAM was sent", StringComparison.Ordinal)),
            "a coded line for the flood", TimeSpan.FromSeconds(30), () => server.Log);

        var engine = new FakeBuildEngine();
        Assert.IsTrue(await Task.Run(Client(server.Url, databases, engine, httpVersion: "Http2").Execute), engine.Log);
        // And no line of it uncoded (checked again over the whole log when the server stops).
        ServerLogs.AssertEveryProblemCoded(server.Log);

        static void WriteFrame(MemoryStream to, byte type, byte flags, int stream, byte[] payload)
        {
            to.Write([(byte)(payload.Length >> 16), (byte)(payload.Length >> 8), (byte)payload.Length, type, flags,
                (byte)(stream >> 24), (byte)(stream >> 16), (byte)(stream >> 8), (byte)stream]);
            to.Write(payload);
        }
    }

    [TestMethod]
    public async Task A_request_body_that_stalls_halfway_is_dropped_with_one_coded_line()
    {
        await using var databases = await TransferChecks.WithRecordsAsync("Sqlite", 10);
        await using var server = await StartAsync(databases, connectionTimeoutSeconds: 2);
        using var stalled = new System.Net.Sockets.TcpClient();
        await stalled.ConnectAsync(System.Net.IPAddress.Loopback, server.Port);
        var stream = stalled.GetStream();
        // Headers promising 1,000 bytes of body, then ten of them, then nothing.
        await stream.WriteAsync(System.Text.Encoding.ASCII.GetBytes(
            $"GET {RestProtocol.Path}?firstId=1&count=1 HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1000\r\n\r\n0123456789"));
        var buffer = new byte[4096];
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(30));
        try
        {
            while (await stream.ReadAsync(buffer, timeout.Token) > 0)
            {
            }
        }
        catch (IOException)
        {
            // dropped
        }
        await Eventually.WaitUntilAsync(() => server.Log.Split('\n').Count(l => l.StartsWith($"warning {ErrorCodes.ConnectionStalled}: ", StringComparison.Ordinal)) == 1,
            "one coded line for the stalled body", TimeSpan.FromSeconds(10), () => server.Log);
    }

    private static (string Status, string Body) Curl(string url, params string[] options)
    {
        var (status, _, body) = CurlRequest.Run(url, options);
        return (status, body);
    }
}
