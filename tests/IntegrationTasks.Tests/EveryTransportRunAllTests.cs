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
            $"-p:NetTcpPort={netTcpPort}", $"-p:RestPort={restPort}", $"-p:WebSocketPort={webSocketPort}", "-p:RecordCounts=1000+2000", "-p:Repetitions=1", "-p:BatchSize=500", "-p:SmallRequestsMaxRecords=1000", "-p:Warmup=false",
            // A second pass with a text payload (what XML and JSON escape), capped by MaxRunBytes to one count of 1,000 records.
            "-p:PayloadBytes=0+2048", "-p:PayloadKind=Text", "-p:MaxRunBytes=2048000");
        Assert.AreEqual(0, exitCode, output);
        var markdown = File.ReadAllText(Path.Combine(artifacts, "results", "results.md"));
        var results = ResultsJson.Load(Path.Combine(artifacts, "results"));
        foreach (var transport in HostingTests.AllTransports)
            Assert.IsTrue(results.HasRow(transport), transport);
        var heading = MarkdownTable.Line(markdown, "## 2,000 records, ");
        StringAssert.Contains(heading, "server reads: SELECT per ID (PerRecord)");
        StringAssert.Contains(heading, "except FileTransferRequest: range query per batch");
        StringAssert.Contains(heading, "(one run, verified row by row)"); // statistics over repetitions: RepetitionOrderTests
        Assert.IsTrue(results.NotRun.Any(n => n.Transport == "MSMQ"));
        // One call per record: above SmallRequestsMaxRecords the report lists them as not run, with the property that raises the cap.
        var notRun = results.NotRun.ToDictionary(n => n.Transport);
        Assert.AreEqual("-p:SmallRequestsMaxRecords=2000", notRun["SoapSmallRequests at 2,000 records"].Fix);
        Assert.IsTrue(notRun.ContainsKey("NetTcpSmallRequests at 2,000 records"));
        // Every server reported its side: TcpClient2's server allocations at one count at least. A server's totals are differences
        // between two readings, so its first run (either count, in a shuffled order) has none.
        var allocations = results.Summaries.Where(s => s.Transport == "TcpClient2").Select(s => s.Costs?.ServerAllocatedBytesPerRecord).ToList();
        Assert.IsTrue(allocations.Any(a => a > 0), string.Join(" | ", allocations));
        var lines = File.ReadAllLines(Path.Combine(artifacts, "results", "results.csv"));
        // Every run, then what was not run (the two capped counts, MSMQ, WebSphere MQ, Kafka), each with its status: nothing asked for is missing.
        var csv = lines.Where(l => !l.Contains(",not run,", StringComparison.Ordinal)).ToList();
        // header + (transports and the peer) × (sizes less the two capped, and the payload's one), one repetition (repetitions and
        // warm-ups: RepetitionOrderTests)
        Assert.HasCount(1 + (HostingTests.AllTransports.Length + 1) * 3 - 2, csv);
        Assert.AreEqual(5, lines.Count(l => l.Contains(",not run,", StringComparison.Ordinal)), string.Join("\n", lines.Where(l => l.Contains("not run"))));
        Assert.IsTrue(results.HasRow("Peer: SQLite ATTACH", records: 2000));
        Assert.IsTrue(csv.Skip(1).All(line => line.Contains(",true,") && line.Contains(",measured,")), "every run verified");
        StringAssert.Contains(output, "TcpClient2 2,000 records, repetition 1 of 1");
        // Every transport carried the text payload: its rows verified byte for byte, in a table of their own with the payload's MB/s.
        foreach (var transport in HostingTests.AllTransports)
            Assert.IsGreaterThan(0.0, results.Row(transport, records: 1000, payloadBytes: 2048).PayloadMegabytesPerSecond ?? 0, transport);
        // The report says each payload's batch size (the plan chose it from BatchBytes).
        StringAssert.Contains(results.Environment["Payloads"], "2 KiB (Text) in batches of 500");
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
        Assert.IsTrue(ResultsJson.Load(Path.Combine(artifacts, "results")).HasRow("Peer: SQLite ATTACH"));
        foreach (var server in new[] { "TcpTestServer3", "HttpServer", "SoapServer", "GrpcServer", "RestServer", "WebSocketServer" })
            StringAssert.Contains(File.ReadAllText(Path.Combine(artifacts, "logs", $"{server}.log")), "Range", $"{server} says how it reads");
        HostingTests.AssertEndedCleanly(artifacts);
        foreach (var used in new[] { port, httpPort, soapPort, netTcpPort, grpcPort, restPort, webSocketPort })
            HostingTests.AssertPortFree(used);
    }
}
