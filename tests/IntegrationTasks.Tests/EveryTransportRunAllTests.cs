namespace IntegrationTasks.Tests;

/// <summary>The whole suite as a user runs it: RunAll over every transport, per ID and in Range mode, verified and reported.</summary>
[TestClass]
[TestCategory("EndToEnd")]
public sealed class EveryTransportRunAllTests
{
    [TestMethod]
    public void RunAll_transfers_verifies_and_reports_every_transport()
    {
        using var artifacts = new TempDirectory("it-runall-");
        var port = TestPorts.Free();
        var httpPort = TestPorts.Free();
        int soapPort = TestPorts.Free(), netTcpPort = TestPorts.Free(), restPort = TestPorts.Free(), webSocketPort = TestPorts.Free();
        var (exitCode, output) = HostingTests.RunBuild("RunAll", artifacts,
            $"-p:Port={port}", $"-p:HttpPort={httpPort}", $"-p:SoapPort={soapPort}",
            $"-p:NetTcpPort={netTcpPort}", $"-p:RestPort={restPort}", $"-p:WebSocketPort={webSocketPort}", "-p:RecordCounts=1000+3000", "-p:Repetitions=1", "-p:BatchSize=500", "-p:SmallRequestsMaxRecords=1000", "-p:Warmup=false",
            // A second pass with a text payload (what XML and JSON escape), capped by MaxRunBytes to one count of 1,000 records.
            "-p:PayloadBytes=0+2048", "-p:PayloadKind=Text", "-p:MaxRunBytes=2048000");
        Assert.AreEqual(0, exitCode, output);
        var markdown = File.ReadAllText(Path.Combine(artifacts, "results", "results.md"));
        foreach (var transport in HostingTests.AllTransports)
            StringAssert.Contains(markdown, $"| {transport} |");
        var heading = MarkdownTable.Line(markdown, "## 3,000 records, ");
        StringAssert.Contains(heading, "server reads: SELECT per ID (PerRecord)");
        StringAssert.Contains(heading, "except FileTransferRequest: range query per batch");
        StringAssert.Contains(heading, "(one run, verified row by row)"); // statistics over repetitions: RepetitionOrderTests
        StringAssert.Contains(markdown, "| MSMQ |");
        // One call per record: above SmallRequestsMaxRecords the report lists them as not run, with the property that raises the cap.
        var notRun = MarkdownTable.With(markdown, "How to run it");
        StringAssert.Contains(notRun.Cell("SoapSmallRequests at 3,000 records", "Why"), "up to 1,000 records");
        Assert.AreEqual("`-p:SmallRequestsMaxRecords=3000`", notRun.Cell("SoapSmallRequests at 3,000 records", "How to run it"));
        Assert.IsTrue(notRun.HasRow("NetTcpSmallRequests at 3,000 records"));
        // Every server reported its side: a costs table has server allocations for the TCP server (a number, not "–"). A server's
        // totals are differences between two readings, so its first run (either count, in a shuffled order) has none.
        var allocations = MarkdownTable.All(markdown).Where(t => t.Headers.Contains("Server bytes allocated / record"))
            .Select(t => t.Row("TcpClient2")["Server bytes allocated / record"]).ToList();
        Assert.IsTrue(allocations.Any(cell => cell != "–"), string.Join(" | ", allocations));
        var lines = File.ReadAllLines(Path.Combine(artifacts, "results", "results.csv"));
        // Every run, then what was not run (the two capped counts, MSMQ, WebSphere MQ, Kafka), each with its status: nothing asked for is missing.
        var csv = lines.Where(l => !l.Contains(",not run,", StringComparison.Ordinal)).ToList();
        // header + (transports and the peer) × (sizes less the two capped, and the payload's one), one repetition (repetitions and
        // warm-ups: RepetitionOrderTests)
        Assert.HasCount(1 + (HostingTests.AllTransports.Length + 1) * 3 - 2, csv);
        Assert.AreEqual(5, lines.Count(l => l.Contains(",not run,", StringComparison.Ordinal)), string.Join("\n", lines.Where(l => l.Contains("not run"))));
        StringAssert.Contains(markdown, "| Peer: SQLite ATTACH |");
        Assert.IsTrue(csv.Skip(1).All(line => line.Contains(",true,") && line.Contains(",measured,")), "every run verified");
        StringAssert.Contains(output, "TcpClient2 3,000 records, repetition 1 of 1");
        // Every transport carried the text payload: its rows verified byte for byte, in a table of their own with the payload's MB/s.
        var payloadTable = MarkdownTable.After(markdown, "## 1,000 records of 2 KiB text payload, ");
        foreach (var transport in HostingTests.AllTransports)
            Assert.AreNotEqual("–", payloadTable.Cell(transport, "Payload MB/s"), transport);
        // The report says each payload's batch size (the plan chose it from BatchBytes).
        StringAssert.Contains(MarkdownTable.Line(markdown, "- Payloads: "), "2 KiB (Text) in batches of 500");
        var payloadRuns = File.ReadAllLines(Path.Combine(artifacts, "results", "runs.jsonl")).Where(r => r.Contains("\"payloadBytes\":2048")).ToList();
        Assert.HasCount(HostingTests.AllTransports.Length + 1, payloadRuns);
        Assert.IsTrue(payloadRuns.All(r => r.Contains("\"payloadKind\":\"Text\"")), "the pass's rows were made again as text");
        HostingTests.AssertEndedCleanly(artifacts);
        foreach (var used in new[] { port, httpPort, soapPort, netTcpPort, restPort, webSocketPort })
            HostingTests.AssertPortFree(used);
    }

    [TestMethod]
    public void RunAll_in_Range_mode_reads_ranges_in_every_server_family_and_says_so()
    {
        using var artifacts = new TempDirectory("it-range-");
        int port = TestPorts.Free(), httpPort = TestPorts.Free(), soapPort = TestPorts.Free(),
            netTcpPort = TestPorts.Free(), grpcPort = TestPorts.Free(), restPort = TestPorts.Free(), webSocketPort = TestPorts.Free();
        // A transport of each server (the servers read the ranges), and the references.
        string[] transports = ["DirectCopy", "PipelinedCopy", "TcpClientSingleThreadTest", "TcpClientMultiThreadTest3", "FileTransferRequest",
            "HttpRequest", "SoapSmallBatchesAsync", "NetTcpSmallBatchesMultiThread", "GrpcStreaming", "RabbitMQClientTest", "RestJson", "WebSocketClient"];
        var (exitCode, output) = HostingTests.RunBuild("RunAll", artifacts, "-p:ServerWork=Range", $"-p:Transports={string.Join('+', transports)}",
            $"-p:Port={port}", $"-p:HttpPort={httpPort}", $"-p:SoapPort={soapPort}",
            $"-p:NetTcpPort={netTcpPort}", $"-p:GrpcPort={grpcPort}", $"-p:RestPort={restPort}", $"-p:WebSocketPort={webSocketPort}", "-p:RecordCounts=1500", "-p:Repetitions=1", "-p:Warmup=false", "-p:BatchSize=500",
            "-p:PayloadBytes=2000"); // bytes (base64 in XML and JSON) through each server family
        Assert.AreEqual(0, exitCode, output);
        var runs = File.ReadAllLines(Path.Combine(artifacts, "results", "runs.jsonl"));
        Assert.HasCount(transports.Length + 1, runs, "every transport and the peer, verified");
        Assert.IsTrue(runs.All(r => r.Contains("\"serverWork\":\"Range\"") && r.Contains("\"verified\":true") && r.Contains("\"payloadBytes\":2000")), string.Join("\n", runs));
        var markdown = File.ReadAllText(Path.Combine(artifacts, "results", "results.md"));
        StringAssert.Contains(MarkdownTable.Line(markdown, "## 1,500 records of 2,000 B payload, "), "server reads: range query per batch (Range)");
        StringAssert.Contains(markdown, "| Peer: SQLite ATTACH |");
        foreach (var server in new[] { "TcpTestServer3", "HttpServer", "SoapServer", "GrpcServer", "RestServer", "WebSocketServer" })
            StringAssert.Contains(File.ReadAllText(Path.Combine(artifacts, "logs", $"{server}.log")), "Range", $"{server} says how it reads");
        HostingTests.AssertEndedCleanly(artifacts);
        foreach (var used in new[] { port, httpPort, soapPort, netTcpPort, grpcPort, restPort, webSocketPort })
            HostingTests.AssertPortFree(used);
    }
}
