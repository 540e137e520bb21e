namespace IntegrationTasks.Tests;

/// <summary>RunAll through the delay relay: its faults (reset, silence, a killed server) in every repetition, Unix sockets, the latency sweep.</summary>
[TestClass]
[TestCategory("EndToEnd")]
public sealed class NetworkFaultTests
{
    [TestMethod]
    [Timeout(600_000, CooperativeCancellation = true)]
    public void RunAll_over_Unix_sockets_runs_the_TCP_generations_verified_and_the_relay_cuts_and_they_resume()
    {
        // The stream seam through the build: -p:Connector=Unix serves and connects over a Unix socket, and -p:Fault=Reset puts the
        // relay in front of it on a socket of its own.
        using var artifacts = new TempDirectory("it-unix-");
        var (exitCode, output) = HostingTests.RunBuild("RunAll", artifacts, "-p:Connector=Unix", "-p:Fault=Reset", "-p:FaultAfterBytes=400000", "-p:Transports=TcpClient2+TcpClientMultiThreadTest3",
            "-p:RecordCounts=5000", "-p:Repetitions=1", "-p:Warmup=false", "-p:BatchSize=100", "-p:Peers=false");
        Assert.AreEqual(0, exitCode, output);
        StringAssert.Contains(output, $"unix://{artifacts}/sockets/records.sock");
        StringAssert.Contains(output, $"unix://{artifacts}/sockets/relay.sock");
        var runs = MeasurementLog.Read(Path.Combine(artifacts, "results", "runs.jsonl"));
        Assert.HasCount(2, runs);
        Assert.IsTrue(runs.All(r => r is { Verified: true, FaultInjected: true, ThroughRelay: true, RowsDuplicated: 0, Reconnects: >= 1 }), string.Join("\n", runs));
        Assert.IsFalse(Directory.EnumerateFiles(Path.Combine(artifacts, "sockets")).Any(), "no socket file is left behind");
    }

    [TestMethod]
    public void RunAll_with_a_reset_in_every_repetition_resumes_or_fails_cleanly_and_the_report_has_a_fault_table()
    {
        using var artifacts = new TempDirectory("it-fault-");
        var (exitCode, output) = HostingTests.RunBuild("RunAll", artifacts, "-p:Fault=Reset", "-p:FaultAfterBytes=400000",
            "-p:Transports=TcpClientSingleThreadTest+TcpClient2+TcpClientMultiThreadTest4+HttpRequest+GrpcStreaming+SoapSmallBatchesAsync+WebSocketClient+FileTransferRequest",
            "-p:RecordCounts=5000", "-p:Repetitions=2", "-p:Warmup=false", "-p:BatchSize=100", "-p:Peers=false");
        // TCP 1 cannot resume: its clean failure is the outcome recorded, not a failed build.
        Assert.AreEqual(0, exitCode, output);
        var runs = MeasurementLog.Read(Path.Combine(artifacts, "results", "runs.jsonl"));
        Assert.HasCount(16, runs);
        var faulted = runs.Where(r => r.Transport != "FileTransferRequest").ToList();
        // First: the fault landed in every relayed run (counted on the server's bytes, so it cannot miss).
        Assert.IsTrue(faulted.All(r => r is { FaultInjected: true, FaultAfterBytes: 400_000 }), string.Join("\n", runs));
        Assert.IsTrue(faulted.All(r => r is { Verified: true, ThroughRelay: true, Fault: "Reset", RowsDuplicated: 0 }), string.Join("\n", runs));
        // Files are not relayed, so no fault reached them and none is recorded.
        Assert.IsTrue(runs.Where(r => r.Transport == "FileTransferRequest").All(r => r.Fault is null && r.Completed), string.Join("\n", runs));
        // One reset per repetition (a fresh relay each time): the resuming clients resumed once each, every row there once.
        foreach (var run in faulted.Where(r => r.Transport != "TcpClientSingleThreadTest"))
            Assert.IsTrue(run is { Completed: true, Reconnects: 1, RecoverySeconds: > 0 } && run.RowsMatched == 5000, run.ToString());
        // TCP 1 failed with its code, whole batches committed, none twice.
        foreach (var run in faulted.Where(r => r.Transport == "TcpClientSingleThreadTest"))
            Assert.IsTrue(run is { FailedWith: ErrorCodes.ConnectionLost, RecordsCommitted: > 0 and < 5000 } && run.RecordsCommitted % 100 == 0 && run.RowsMatched == run.RecordsCommitted,
                run.ToString());
        var results = ResultsJson.Load(Path.Combine(artifacts, "results"));
        Assert.AreEqual("Reset", results.Environment["Fault"]);
        StringAssert.Contains(File.ReadAllText(Path.Combine(artifacts, "results", "results.md")), "## Faults");
        var tcp1 = results.Fault("TcpClientSingleThreadTest");
        Assert.AreEqual(("Reset", 5_000, 2, 2, 0, 0), (tcp1.Fault, tcp1.Records, tcp1.Runs, tcp1.FailedCleanly, tcp1.RowsLost, tcp1.RowsDuplicated));
        CollectionAssert.AreEqual(new[] { ErrorCodes.ConnectionLost }, tcp1.FailureCodes.Distinct().ToArray());
        foreach (var transport in new[] { "TcpClient2", "TcpClientMultiThreadTest4", "HttpRequest", "GrpcStreaming", "SoapSmallBatchesAsync", "WebSocketClient" })
        {
            var row = results.Fault(transport);
            Assert.AreEqual(("Reset", 5_000, 2, 2, 0, 0), (row.Fault, row.Records, row.Runs, row.Resumed, row.RowsLost, row.RowsDuplicated), transport);
            Assert.IsTrue(row.RecoverySeconds is { Count: 2, Mean: >= 0 }, transport);
        }
        // The failed runs are in no statistic: TCP 1 has no row in the ranking.
        Assert.IsFalse(results.HasRow("TcpClientSingleThreadTest"));
        // An injected reset is announced once, not followed by the relay's noise about the connection it cut.
        Assert.DoesNotContain("ended: Operation canceled", output);
        StringAssert.Contains(File.ReadAllText(Path.Combine(artifacts, "results", "report.html")), "<table id=\"faults\">");
        HostingTests.AssertEndedCleanly(artifacts);
    }

    [TestMethod]
    public void A_fault_that_never_landed_is_recorded_and_reported_as_not_injected()
    {
        // The walk-through's case: too little data for FaultAfterBytes; the fault table said "rode it out (no break)".
        using var artifacts = new TempDirectory("it-not-injected-");
        var (exitCode, output) = HostingTests.RunBuild("RunAll", artifacts, "-p:Fault=Reset", "-p:FaultAfterBytes=100000000", "-p:Transports=TcpClient2", "-p:RecordCounts=2000", "-p:Repetitions=1",
            "-p:Warmup=false", "-p:Peers=false");
        Assert.AreEqual(0, exitCode, output);
        var run = MeasurementLog.Read(Path.Combine(artifacts, "results", "runs.jsonl")).Single();
        Assert.IsTrue(run is { Fault: "Reset", FaultInjected: false, FaultAfterBytes: 100_000_000, FaultBytesFromServer: > 0 and < 100_000_000 }, run.ToString());
        StringAssert.Contains(output, "warning IT4014: TcpClient2, repetition 1: the fault Reset");
        var fault = ResultsJson.Load(Path.Combine(artifacts, "results")).Fault("TcpClient2");
        Assert.AreEqual(("Reset", 2_000, 1, 1, 0), (fault.Fault, fault.Records, fault.Runs, fault.NotInjected, fault.Unbroken));
        Assert.IsTrue(fault.MaxBytesFromServer is > 0 and < 100_000_000, fault.ToString());
    }

    [TestMethod]
    public void A_latency_sweep_runs_each_transport_at_each_round_trip_through_the_relay()
    {
        using var artifacts = new TempDirectory("it-latency-");
        var (exitCode, output) = HostingTests.RunBuild("LatencySweep", artifacts, "-p:SweepTransports=TcpClientSingleThreadTest+TcpClient2+RestJson+WebSocketClient", "-p:LatenciesMs=0+10",
            "-p:SweepRecords=2000", "-p:BatchSize=200",
            "-p:Repetitions=1", "-p:Warmup=false");
        Assert.AreEqual(0, exitCode, output);
        // Its own folder, as the other sweeps: a RunAll's results in results/ are kept.
        var results = Path.Combine(artifacts, "results", "latency");
        Assert.IsFalse(File.Exists(Path.Combine(artifacts, "results", "runs.jsonl")));
        var markdown = File.ReadAllText(Path.Combine(results, "results.md"));
        StringAssert.Contains(markdown, "## Latency sweep (2,000 records;");
        var rows = ResultsJson.Load(results);
        Assert.IsTrue(rows.HasRow("TcpClientSingleThreadTest (RTT 0 ms)") && rows.HasRow("TcpClient2 (RTT 10 ms)"), string.Join(", ", rows.Summaries.Select(s => s.Transport)));
        var sweep = File.ReadAllLines(Path.Combine(results, "runs.jsonl"));
        foreach (var transport in new[] { "RestJson", "WebSocketClient" })
            Assert.HasCount(2, sweep.Where(l => l.Contains($"\"transport\":\"{transport}\"") && l.Contains("\"verified\":true")).ToList(), transport);
        StringAssert.Contains(File.ReadAllText(Path.Combine(results, "report.html")), "id=\"latency-sweep\"");
        // The lock-step client waited for ten round trips of 10 ms at least: the relay delayed it.
        var lockStep = File.ReadAllLines(Path.Combine(results, "runs.jsonl"))
            .Where(l => l.Contains("\"transport\":\"TcpClientSingleThreadTest\"") && l.Contains("\"latencyMs\":10")).ToList();
        Assert.HasCount(1, lockStep);
        HostingTests.AssertEndedCleanly(artifacts);
    }
}
