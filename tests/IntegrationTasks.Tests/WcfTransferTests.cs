using System.Xml.Linq;
using IntegrationTasks.Wcf.NetTcp;

namespace IntegrationTasks.Tests;

[TestClass]
[TestCategory("EndToEnd")]
public sealed class WcfTransferTests
{
    private static readonly string[] Variants =
        ["SmallRequests", "SmallBatches", "SmallBatchesAsync", "SmallBatchesAsyncSyncServer", "SmallBatchesMultiThread", "SmallBatchesTask"];

    private static WcfClientTask Client(string transport, string address, TestDatabases databases, FakeBuildEngine engine, int totalBatches = 4, int batchSize = 250)
    {
        var client = (WcfClientTask)Activator.CreateInstance(typeof(WcfClientTask).Assembly.GetType($"IntegrationTasks.Wcf.{transport}", throwOnError: true)!)!;
        client.Address = address;
        client.MaxInFlight = 3;
        return client.For(databases, engine, totalBatches, batchSize);
    }

    private static Task<RunningHostModule> StartSoapAsync(TestDatabases databases, int maxBatchRecords = 100_000, long maxMessageBytes = 64 << 20) =>
        RunningHostModule.StartAsync(new SoapServer { Connections = 4, Answerers = 2, MaxBatchRecords = maxBatchRecords, MaxMessageBytes = maxMessageBytes },
            databases, ServiceNames.SoapPath);

    private static async Task RunEveryVariantAsync(string binding, string address, TestDatabases databases)
    {
        foreach (var variant in Variants)
        {
            await databases.Client.EmptyAsync(RecordTable.Client, CancellationToken.None);
            var engine = new FakeBuildEngine();
            var client = Client(binding + variant, address, databases, engine);
            Assert.IsTrue(await Task.Run(client.Execute), $"{binding}{variant}:\n{engine.Log}");
            Assert.AreEqual(1000, client.Records, $"{binding}{variant}");
            var report = await new TransferVerifier(databases.Server, databases.Client).VerifyAsync(1000, CancellationToken.None);
            Assert.AreEqual(1000, report.Matched, $"{binding}{variant}: every row, exactly once, values equal");
        }
    }

    [TestMethod]
    [DataRow("Sqlite")]
    [DataRow("PostgreSql")]
    public async Task Every_SOAP_variant_moves_every_row_intact(string provider)
    {
        await using var databases = await TransferChecks.WithRecordsAsync(provider, 1000);
        await using var server = await StartSoapAsync(databases);
        await RunEveryVariantAsync("Soap", server.Url, databases);
    }

    [TestMethod]
    [DataRow("Sqlite")]
    [DataRow("PostgreSql")]
    public async Task Every_net_tcp_variant_moves_every_row_intact_through_our_framing_server(string provider)
    {
        await using var databases = await TransferChecks.WithRecordsAsync(provider, 1000);
        await using var server = await RunningNetTcpServer.StartAsync(databases.Server);
        await RunEveryVariantAsync("NetTcp", server.Address, databases);
        Assert.AreEqual(0L, server.Host.ConnectionsFailed, string.Join("\n", server.Log.Lines));
    }

    [TestMethod]
    [DataRow("Soap")]
    [DataRow("NetTcp")]
    public async Task Every_variant_resumes_a_connection_reset_mid_transfer_and_every_row_arrives_once(string binding)
    {
        await using var databases = await TransferChecks.WithRecordsAsync("Sqlite", 2000);
        await using var soap = binding == "Soap" ? await StartSoapAsync(databases) : null;
        await using var netTcp = binding == "NetTcp" ? await RunningNetTcpServer.StartAsync(databases.Server) : null;
        var serverPort = soap?.Port ?? netTcp!.Port;
        foreach (var variant in Variants)
        {
            await databases.Client.EmptyAsync(RecordTable.Client, CancellationToken.None);
            var (relay, relayPort, running) = await RelayFaults.ResettingAsync(serverPort, afterBytes: 200_000);
            await using (relay)
            {
                var address = binding == "Soap" ? $"http://127.0.0.1:{relayPort}{ServiceNames.SoapPath}" : $"net.tcp://127.0.0.1:{relayPort}{ServiceNames.NetTcpPath}";
                var engine = new FakeBuildEngine();
                var client = Client(binding + variant, address, databases, engine, totalBatches: 20, batchSize: 100);
                Assert.IsTrue(await Task.Run(client.Execute), $"{binding}{variant}:\n{engine.Log}");
                Assert.IsTrue(relay.FaultInjected, $"{binding}{variant}: the relay reset the connection");
                Assert.AreEqual(1, client.Reconnects, $"{binding}{variant}:\n{engine.Log}");
                await new TransferVerifier(databases.Server, databases.Client).VerifyAsync(2000, CancellationToken.None);
            }
            await running;
        }
    }

    [TestMethod]
    public async Task The_WSDL_is_served_and_a_plain_SOAP_11_request_without_WCF_is_answered()
    {
        await using var databases = await TransferChecks.WithRecordsAsync("Sqlite", 10);
        await using var server = await StartSoapAsync(databases);
        using var http = new HttpClient();

        var wsdlText = await http.GetStringAsync(server.Url + "?wsdl");
        // SoapCore answers every GET of the path with it: each form is served the same, fixed, document.
        foreach (var form in new[] { "", "?singleWsdl" })
            Assert.AreEqual(wsdlText, await http.GetStringAsync(server.Url + form), form);
        var wsdl = XDocument.Parse(wsdlText);
        XNamespace w = "http://schemas.xmlsoap.org/wsdl/", soap = "http://schemas.xmlsoap.org/wsdl/soap/";
        Assert.AreEqual(w + "definitions", wsdl.Root!.Name);
        var operations = wsdl.Descendants(w + "portType").Single().Elements(w + "operation").Select(o => (string)o.Attribute("name")!).Order().ToList();
        CollectionAssert.AreEqual(new[] { "GetRecord", "GetRecords", "GetRecordsConcurrently" }, operations);
        Assert.IsTrue(wsdl.Descendants(soap + "binding").Any(b => (string?)b.Attribute("transport") == "http://schemas.xmlsoap.org/soap/http"));
        StringAssert.EndsWith((string)wsdl.Descendants(soap + "address").Single().Attribute("location")!, ServiceNames.SoapPath);
        // Every type the messages name is defined in the namespace they name it in (SoapCore put Record in another one).
        XNamespace xs = "http://www.w3.org/2001/XMLSchema";
        var defined = wsdl.Descendants(xs + "complexType").Where(t => t.Attribute("name") is not null)
            .Select(t => ((string)t.Ancestors(xs + "schema").First().Attribute("targetNamespace")!, (string)t.Attribute("name")!)).ToHashSet();
        Assert.IsTrue(defined.Contains((ServiceNames.Namespace, "Record")) && defined.Contains((ServiceNames.Namespace, "ArrayOfRecord")),
            string.Join(", ", defined));

        // What any SOAP 1.1 client sends: an envelope and a SOAPAction header.
        var reply = await PostAsync(http, server.Url, "GetRecords", "<firstId>3</firstId><count>2</count>");
        Assert.AreEqual(200, (int)reply.Status, reply.Body);
        var ids = XDocument.Parse(reply.Body).Descendants(XName.Get("Id", ServiceNames.Namespace)).Select(e => (int)e).ToList();
        CollectionAssert.AreEqual(new[] { 3, 4 }, ids);
    }

    [TestMethod]
    public async Task Bad_SOAP_requests_get_faults_or_a_refusal_and_the_service_keeps_serving()
    {
        await using var databases = await TransferChecks.WithRecordsAsync("Sqlite", 1000);
        await using var server = await StartSoapAsync(databases, maxBatchRecords: 300, maxMessageBytes: 64 * 1024);
        using var http = new HttpClient();

        var malformed = await PostRawAsync(http, server.Url, "GetRecords", "<s:Envelope xmlns:s=\"http://schemas.xmlsoap.org/soap/envelope/\"><s:Body><GetRecords");
        Assert.IsGreaterThanOrEqualTo(400, (int)malformed.Status, malformed.Body);
        StringAssert.Contains(malformed.Body, "Fault");
        StringAssert.Contains(malformed.Body, "IT2001: The request is not a well-formed SOAP envelope");

        var overQuota = await PostAsync(http, server.Url, "GetRecords", "<firstId>1</firstId><count>301</count>");
        StringAssert.Contains(overQuota.Body, "IT1001: count must be between 1 and 300");

        var oversized = await PostAsync(http, server.Url, "GetRecord", "<id>1</id><!--" + new string('x', 70 * 1024) + "-->");
        Assert.IsGreaterThanOrEqualTo(400, (int)oversized.Status, oversized.Body);
        StringAssert.Contains(oversized.Body, "IT2101: The request is over the limit of 65,536 bytes");

        // The WCF client turns a fault into the service's own code.
        var engine = new FakeBuildEngine();
        Assert.IsFalse(await Task.Run(Client("SoapSmallBatches", server.Url, databases, engine, 2, 500).Execute));
        Assert.IsTrue(engine.HasErrorCode(ErrorCodes.InvalidParameter), engine.Log);

        // …and a good client is still served.
        await databases.Client.EmptyAsync(RecordTable.Client, CancellationToken.None);
        engine = new FakeBuildEngine();
        Assert.IsTrue(await Task.Run(Client("SoapSmallBatchesAsync", server.Url, databases, engine, 4, 250).Execute), engine.Log);
        await new TransferVerifier(databases.Server, databases.Client).VerifyAsync(1000, CancellationToken.None);
    }

    [TestMethod]
    public async Task The_SOAP_endpoint_refuses_a_DTD_unread_and_SOAP_12_with_a_VersionMismatch_fault()
    {
        await using var databases = await TransferChecks.WithRecordsAsync("Sqlite", 100);
        await using var server = await StartSoapAsync(databases);
        using var http = new HttpClient();
        const string Envelope = "<s:Envelope xmlns:s=\"http://schemas.xmlsoap.org/soap/envelope/\"><s:Body><GetRecord xmlns=\"" + ServiceNames.Namespace + "\">";

        // An internal entity was expanded: the ID written as &five; came back as record 5.
        var entity = await PostRawAsync(http, server.Url, "GetRecord",
            "<?xml version=\"1.0\"?><!DOCTYPE s:Envelope [<!ENTITY five \"5\">]>" + Envelope + "<id>&five;</id></GetRecord></s:Body></s:Envelope>");
        Assert.AreEqual(System.Net.HttpStatusCode.InternalServerError, entity.Status, entity.Body);
        StringAssert.Contains(entity.Body, "IT2001: ");
        StringAssert.Contains(entity.Body, "document type declaration (DTD)");
        Assert.DoesNotContain("<Id>5</Id>", entity.Body);

        // A "billion laughs" took 0.5-0.85 s of server CPU before its refusal; it is now refused from its prolog.
        var laughs = new StringBuilder("<!DOCTYPE lolz [<!ENTITY lol \"lol\">");
        for (var level = 1; level <= 9; level++)
            laughs.Append($"<!ENTITY lol{level} \"{string.Concat(Enumerable.Repeat(level == 1 ? "&lol;" : $"&lol{level - 1};", 10))}\">");
        laughs.Append("]>").Append(Envelope).Append("<id>&lol9;</id></GetRecord></s:Body></s:Envelope>");
        var billion = await PostRawAsync(http, server.Url, "GetRecord", laughs.ToString());
        StringAssert.Contains(billion.Body, "IT2001: ");
        StringAssert.Contains(billion.Body, "document type declaration (DTD)");

        // SOAP 1.2 got "IT3005 ... Parameter count mismatch"; by its content type or by its envelope's namespace it is told what is served.
        using (var request = new HttpRequestMessage(HttpMethod.Post, server.Url)
               {
                   Content = new StringContent(
                       "<s:Envelope xmlns:s=\"http://www.w3.org/2003/05/soap-envelope\"><s:Body><GetRecord xmlns=\"" + ServiceNames.Namespace + "\"><id>1</id></GetRecord></s:Body></s:Envelope>",
                       Encoding.UTF8, "application/soap+xml"),
               })
        {
            using var response = await http.SendAsync(request);
            var body = await response.Content.ReadAsStringAsync();
            StringAssert.Contains(body, "<faultcode>s:VersionMismatch</faultcode>");
            StringAssert.Contains(body, "serves SOAP 1.1 only");
        }
        var soap12AsTextXml = await PostRawAsync(http, server.Url, "GetRecord",
            "<e:Envelope xmlns:e=\"http://www.w3.org/2003/05/soap-envelope\"><e:Body><GetRecord xmlns=\"" + ServiceNames.Namespace + "\"><id>1</id></GetRecord></e:Body></e:Envelope>");
        StringAssert.Contains(soap12AsTextXml.Body, "<faultcode>s:VersionMismatch</faultcode>");

        // Every refusal is one coded line in the server's log; a good request is still answered, a prolog with comments included.
        await Eventually.WaitUntilAsync(() => server.Log.Split('\n').Count(l => l.StartsWith("warning IT2001:", StringComparison.Ordinal)
            && l.Contains("Refused the request from", StringComparison.Ordinal)) == 4, "four coded refusal lines", seen: () => server.Log);
        var good = await PostRawAsync(http, server.Url, "GetRecord", "\uFEFF<?xml version=\"1.0\"?>\n<!-- a comment -->" + Envelope + "<id>7</id></GetRecord></s:Body></s:Envelope>");
        Assert.AreEqual(System.Net.HttpStatusCode.OK, good.Status, good.Body);
        StringAssert.Contains(good.Body, ">7<");
    }

    [DoNotParallelize] // a timeout of a second or two that a core busy with another class could miss
    [TestMethod]
    public async Task A_SOAP_body_that_stalls_is_dropped_and_logged_as_unanswered()
    {
        await using var databases = await TransferChecks.WithRecordsAsync("Sqlite", 100);
        await using var server = await RunningHostModule.StartAsync(new SoapServer { Connections = 2, Answerers = 1, ConnectionTimeoutSeconds = 1 },
            databases, ServiceNames.SoapPath);
        using (var stalled = new TcpClient())
        {
            await stalled.ConnectAsync("127.0.0.1", server.Port);
            var stream = stalled.GetStream();
            var envelope = "<s:Envelope xmlns:s=\"http://schemas.xmlsoap.org/soap/envelope/\"><s:Body>";
            await stream.WriteAsync(Encoding.ASCII.GetBytes($"POST {ServiceNames.SoapPath} HTTP/1.1\r\nHost: x\r\nContent-Type: text/xml\r\n" +
                $"SOAPAction: \"{ServiceNames.Action("GetRecord")}\"\r\nContent-Length: 1000\r\n\r\n{envelope}"));
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
                // the stall guard aborts the connection
            }
        }
        // It was logged "answered with a SOAP fault", though nothing was (or could be) answered.
        await Eventually.WaitUntilAsync(() => server.Log.Contains("IT3007", StringComparison.Ordinal) && server.Log.Contains("nothing was sent", StringComparison.Ordinal),
            "the stall guard's IT3007 and the unanswered request's line", seen: () => server.Log);
        Assert.DoesNotContain("answered with a SOAP fault", server.Log);
    }

    [DoNotParallelize] // a timeout of a second or two that a core busy with another class could miss
    [TestMethod]
    [DataRow("garbage bytes", ErrorCodes.MalformedMessage)]
    [DataRow("oversized envelope", ErrorCodes.FrameTooLarge)]
    [DataRow("aborted mid-envelope", ErrorCodes.TruncatedFrame)]
    [DataRow("envelope that is not binary SOAP", ErrorCodes.MalformedXml)]
    [DataRow("100 random bytes as an envelope", ErrorCodes.MalformedXml)]
    [DataRow("100 bytes of 0xFF as an envelope", ErrorCodes.MalformedXml)]
    [DataRow("a text SOAP 1.2 envelope", ErrorCodes.MalformedXml)]
    [DataRow("an empty envelope", ErrorCodes.MalformedXml)]
    [DataRow("stalled in the preamble", ErrorCodes.ConnectionStalled)]
    [DataRow("stalled mid-envelope", ErrorCodes.ConnectionStalled)]
    public async Task A_bad_net_tcp_peer_is_closed_with_a_coded_warning_and_a_good_client_is_still_served(string misbehaviour, string code)
    {
        await using var databases = await TransferChecks.WithRecordsAsync("Sqlite", 1000);
        // A short ConnectionTimeout, so that the stalled peers (which keep their connections open) are dropped within the test.
        await using var server = await RunningNetTcpServer.StartAsync(databases.Server, maxMessageBytes: 1 << 20, connectionTimeout: TimeSpan.FromSeconds(1));

        using (var bad = new TcpClient())
        {
            await bad.ConnectAsync("127.0.0.1", server.Port);
            var stream = bad.GetStream();
            byte[] bytes = misbehaviour switch
            {
                "garbage bytes" => Encoding.ASCII.GetBytes("GET / HTTP/1.1\r\nHost: x\r\n\r\n"),
                "oversized envelope" => [.. Preamble(server.Address), MessageFraming.SizedEnvelope, 0xFF, 0xFF, 0xFF, 0x7F],
                "aborted mid-envelope" => [.. Preamble(server.Address), MessageFraming.SizedEnvelope, 0x80, 0x08, 1, 2, 3],
                "stalled in the preamble" => [.. Preamble(server.Address).AsSpan(0, 3)],
                "stalled mid-envelope" => [.. Preamble(server.Address), MessageFraming.SizedEnvelope, 0x80, 0x08, 1, 2, 3, 4, 5],
                // These four were logged as IT9999 (WCF's MessageLogger.LogMessage is not implemented; a 0-byte buffer was out of range).
                "100 random bytes as an envelope" => [.. Preamble(server.Address), MessageFraming.SizedEnvelope, 100, .. RandomBytes(100)],
                "100 bytes of 0xFF as an envelope" => [.. Preamble(server.Address), MessageFraming.SizedEnvelope, 100, .. Enumerable.Repeat((byte)0xFF, 100)],
                "a text SOAP 1.2 envelope" => [.. Preamble(server.Address), .. MessageFraming.SizedEnvelopeHeader(TextEnvelope.Length), .. TextEnvelope],
                "an empty envelope" => [.. Preamble(server.Address), MessageFraming.SizedEnvelope, 0],
                _ => [.. Preamble(server.Address), MessageFraming.SizedEnvelope, 0x04, 0xDE, 0xAD, 0xBE, 0xEF],
            };
            await stream.WriteAsync(bytes);
            if (misbehaviour == "aborted mid-envelope")
                bad.Client.Shutdown(SocketShutdown.Send);
            var answer = new byte[4096];
            var read = 0;
            using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(10));
            for (int n; (n = await stream.ReadAsync(answer.AsMemory(read), timeout.Token)) > 0;)
                read += n; // the server answers (a preamble ack, a fault record) and closes: never a hang
            if (code is ErrorCodes.MalformedMessage or ErrorCodes.FrameTooLarge or ErrorCodes.MalformedXml)
                Assert.IsTrue(answer.AsSpan(0, read).IndexOf(MessageFraming.Fault) >= 0, $"{misbehaviour}: a fault record was expected");
        }
        await Eventually.WaitUntilAsync(() => server.Log.Lines.Any(l => l.StartsWith($"warning {code}", StringComparison.Ordinal)), $"a {code} warning for the bad peer",
            seen: () => string.Join("\n", server.Log.Lines));

        var engine = new FakeBuildEngine();
        Assert.IsTrue(await Task.Run(Client("NetTcpSmallBatchesAsync", server.Address, databases, engine).Execute), engine.Log);
        await new TransferVerifier(databases.Server, databases.Client).VerifyAsync(1000, CancellationToken.None);
    }

    [DoNotParallelize] // a timeout of a second or two that a core busy with another class could miss
    [TestMethod]
    public async Task A_net_tcp_client_that_stops_reading_its_replies_is_dropped_with_IT3007_and_a_good_client_is_still_served()
    {
        await using var databases = await TransferChecks.WithRecordsAsync("Sqlite", 100_000);
        // Long enough for the first reply to be written before the idle client is dropped, on a busy machine too.
        await using var server = await RunningNetTcpServer.StartAsync(databases.Server, connectionTimeout: TimeSpan.FromSeconds(3));

        // Real binary SOAP calls, written by WCF's own session encoder, whose replies (more than the kernel's buffers hold) are
        // never read: before, the connection stayed open for as long as the client liked, the server blocked writing, nothing
        // logged; then it was dropped with a graceful close, which kept the replies queued and never told the client.
        var encoder = NetTcpServiceHost.CreateEncoderFactory(1 << 20).CreateSessionEncoder();
        using var bad = new TcpClient { ReceiveBufferSize = 64 * 1024 };
        await bad.ConnectAsync("127.0.0.1", server.Port);
        var stream = bad.GetStream();
        await stream.WriteAsync(Preamble(server.Address));
        Assert.AreEqual(MessageFraming.PreambleAck, (byte)stream.ReadByte());
        for (var call = 0; call < 2; call++)
        {
            using var message = System.ServiceModel.Channels.Message.CreateMessage(System.ServiceModel.Channels.MessageVersion.Soap12WSAddressing10,
                ServiceNames.Action("GetRecords"), new GetRecordsBody(1 + call * 50_000, 50_000));
            message.Headers.MessageId = new System.Xml.UniqueId();
            message.Headers.To = new Uri(server.Address);
            var envelope = encoder.WriteMessage(message, 1 << 20, System.ServiceModel.Channels.BufferManager.CreateBufferManager(0, 1 << 20));
            await stream.WriteAsync(MessageFraming.SizedEnvelopeHeader(envelope.Count));
            await stream.WriteAsync(envelope.AsMemory());
        }
        // Dropped for not reading (whichever guard speaks first: the reply's writes, or the wait for its next call).
        await Eventually.WaitUntilAsync(() => server.Log.Lines.Any(l => l.StartsWith($"warning {ErrorCodes.ConnectionStalled}", StringComparison.Ordinal)
            && l.Contains("stopped reading its replies", StringComparison.Ordinal)), "an IT3007 warning for the client that stopped reading",
            seen: () => string.Join("\n", server.Log.Lines));
        // It is told with a reset, and what it never read is gone (read now, it ends in the reset, not in the whole replies).
        var reset = await Assert.ThrowsAsync<IOException>(async () =>
        {
            var buffer = new byte[64 * 1024];
            using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(30));
            while (await stream.ReadAsync(buffer, timeout.Token) > 0)
            {
            }
        });
        Assert.AreEqual(SocketError.ConnectionReset, (reset.InnerException as SocketException)?.SocketErrorCode, reset.ToString());

        var engine = new FakeBuildEngine();
        Assert.IsTrue(await Task.Run(Client("NetTcpSmallBatchesAsync", server.Address, databases, engine).Execute), engine.Log);
        await new TransferVerifier(databases.Server, databases.Client).VerifyAsync(1000, CancellationToken.None);
    }

    /// <summary>The body of a GetRecords call, as the WCF client writes it.</summary>
    private sealed class GetRecordsBody(int firstId, int count) : System.ServiceModel.Channels.BodyWriter(isBuffered: true)
    {
        protected override void OnWriteBodyContents(System.Xml.XmlDictionaryWriter writer)
        {
            writer.WriteStartElement("GetRecords", ServiceNames.Namespace);
            writer.WriteElementString("firstId", ServiceNames.Namespace, firstId.ToString(System.Globalization.CultureInfo.InvariantCulture));
            writer.WriteElementString("count", ServiceNames.Namespace, count.ToString(System.Globalization.CultureInfo.InvariantCulture));
            writer.WriteEndElement();
        }
    }

    [TestMethod]
    public async Task A_net_tcp_call_over_the_batch_quota_is_a_fault_with_the_services_code_and_the_session_goes_on()
    {
        await using var databases = await TransferChecks.WithRecordsAsync("Sqlite", 1000);
        await using var server = await RunningNetTcpServer.StartAsync(databases.Server, maxBatchRecords: 300);
        var engine = new FakeBuildEngine();
        Assert.IsFalse(await Task.Run(Client("NetTcpSmallBatches", server.Address, databases, engine, 2, 500).Execute));
        Assert.IsTrue(engine.HasErrorCode(ErrorCodes.InvalidParameter), engine.Log);
        StringAssert.Contains(engine.Log, "count must be between 1 and 300");

        engine = new FakeBuildEngine();
        await databases.Client.EmptyAsync(RecordTable.Client, CancellationToken.None);
        Assert.IsTrue(await Task.Run(Client("NetTcpSmallBatchesTask", server.Address, databases, engine, 4, 250).Execute), engine.Log);
        await new TransferVerifier(databases.Server, databases.Client).VerifyAsync(1000, CancellationToken.None);
    }

    [TestMethod]
    public async Task Without_a_server_a_client_fails_at_once_with_a_coded_error()
    {
        await using var databases = TestDatabases.Sqlite();
        foreach (var (transport, address) in new[]
                 {
                     ("SoapSmallBatches", $"http://127.0.0.1:{TestPorts.Free()}{ServiceNames.SoapPath}"),
                     ("NetTcpSmallBatchesAsync", $"net.tcp://127.0.0.1:{TestPorts.Free()}{ServiceNames.NetTcpPath}"),
                 })
        {
            var engine = new FakeBuildEngine();
            var run = Task.Run(Client(transport, address, databases, engine).Execute);
            Assert.IsFalse(await run.WaitAsync(TimeSpan.FromSeconds(60)));
            Assert.IsTrue(engine.HasErrorCode(ErrorCodes.ConnectionFailed), engine.Log);
        }
    }

    private static byte[] Preamble(string via)
    {
        using var buffer = new MemoryStream();
        buffer.Write([MessageFraming.Version, 1, 0, MessageFraming.Mode, MessageFraming.DuplexMode, MessageFraming.Via]);
        var bytes = Encoding.UTF8.GetBytes(via);
        MessageFraming.WriteSize(buffer, bytes.Length);
        buffer.Write(bytes);
        buffer.Write([MessageFraming.KnownEncoding, MessageFraming.BinarySessionEncoding, MessageFraming.PreambleEnd]);
        return buffer.ToArray();
    }

    private static byte[] RandomBytes(int count)
    {
        var bytes = new byte[count];
        new Random(26).NextBytes(bytes);
        return bytes;
    }

    private static readonly byte[] TextEnvelope = Encoding.UTF8.GetBytes(
        "<s:Envelope xmlns:s=\"http://www.w3.org/2003/05/soap-envelope\"><s:Body><GetRecord xmlns=\"" + ServiceNames.Namespace + "\"><id>1</id></GetRecord></s:Body></s:Envelope>");

    private static Task<(System.Net.HttpStatusCode Status, string Body)> PostAsync(HttpClient http, string url, string operation, string parameters) =>
        PostRawAsync(http, url, operation,
            $"<s:Envelope xmlns:s=\"http://schemas.xmlsoap.org/soap/envelope/\"><s:Body><{operation} xmlns=\"{ServiceNames.Namespace}\">{parameters}</{operation}></s:Body></s:Envelope>");

    private static async Task<(System.Net.HttpStatusCode Status, string Body)> PostRawAsync(HttpClient http, string url, string operation, string envelope)
    {
        using var request = new HttpRequestMessage(HttpMethod.Post, url) { Content = new StringContent(envelope, Encoding.UTF8, "text/xml") };
        request.Headers.Add("SOAPAction", $"\"{ServiceNames.Action(operation)}\"");
        using var response = await http.SendAsync(request);
        return (response.StatusCode, await response.Content.ReadAsStringAsync());
    }
}
