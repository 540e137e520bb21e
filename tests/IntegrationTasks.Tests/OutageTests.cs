namespace IntegrationTasks.Tests;

/// <summary>RunAll through the relay when the server is killed or the network goes silent, in every repetition of every transport.</summary>
[TestClass]
[TestCategory("EndToEnd")]
public sealed class OutageTests
{
    [TestMethod]
    public void RunAll_with_the_server_killed_in_every_repetition_resumes_once_it_is_back_or_fails_cleanly()
    {
        using var artifacts = new TempDirectory("it-kill-");
        var (exitCode, output) = HostingTests.RunBuild("RunAll", artifacts, "-p:Fault=KillServer", "-p:FaultAfterBytes=200000",
            "-p:Transports=TcpClientSingleThreadTest+TcpClient2+TcpClientMultiThreadTest4+HttpRequest+GrpcStreaming+SoapSmallBatchesAsync+NetTcpSmallBatchesAsync+RestJson+WebSocketClient",
            "-p:RecordCounts=5000", "-p:Repetitions=1", "-p:Warmup=false", "-p:BatchSize=100", "-p:Peers=false");
        Assert.AreEqual(0, exitCode, output);
        var runs = MeasurementLog.Read(Path.Combine(artifacts, "results", "runs.jsonl"));
        Assert.HasCount(9, runs);
        // First: the kill landed in every run (counted on the server's bytes, then the connection cut there: it cannot miss).
        Assert.IsTrue(runs.All(r => r is { FaultInjected: true, FaultAfterBytes: 200_000 }), string.Join("\n", runs));
        Assert.IsTrue(runs.All(r => r is { Fault: "KillServer", RowsDuplicated: 0 }), string.Join("\n", runs));
        foreach (var run in runs.Where(r => r.Transport != "TcpClientSingleThreadTest"))
            Assert.IsTrue(run is { Completed: true, Reconnects: >= 1, RecoverySeconds: > 0 } && run.RowsMatched == 5000, run.ToString());
        foreach (var run in runs.Where(r => r.Transport == "TcpClientSingleThreadTest"))
            Assert.IsTrue(run is { FailedWith: ErrorCodes.ConnectionLost } && run.RecordsCommitted % 100 == 0 && run.RowsMatched == run.RecordsCommitted, run.ToString());
        // Killed once per repetition by the relay, started again by the build each time (each server's log says so), stopped for good at the end.
        StringAssert.Contains(output, "warning IT4013: [DelayRelay] Relay: fault injected");
        // (200,000 bytes: early enough in gRPC's compact stream too.)
        foreach (var server in new[] { "TcpTestServer", "TcpServer2", "TcpTestServer4", "HttpServer", "SoapServer", "NetTcpServer", "RestServer", "WebSocketServer" })
        {
            var log = File.ReadAllLines(Path.Combine(artifacts, "logs", $"{server}.log"));
            Assert.AreEqual(1, log.Count(l => l.Contains($"warning IT4012: {server} exited (code ", StringComparison.Ordinal)), string.Join("\n", log));
            Assert.AreEqual(1, log.Count(l => l.Contains($"{server} is back (process", StringComparison.Ordinal)), string.Join("\n", log));
            StringAssert.Contains(output, $"{server} stopped (exit code 0, peak memory", server);
            StringAssert.Contains(output, "started again once after its process exited", server);
        }
        var results = ResultsJson.Load(Path.Combine(artifacts, "results"));
        foreach (var transport in new[] { "TcpClient2", "RestJson", "WebSocketClient" })
        {
            var row = results.Fault(transport);
            Assert.AreEqual(("KillServer", 5_000, 1, 1, 0, 0), (row.Fault, row.Records, row.Runs, row.Resumed, row.RowsLost, row.RowsDuplicated), transport);
        }
        HostingTests.AssertEndedCleanly(artifacts);
    }

    [TestMethod]
    public void RunAll_with_a_silence_in_every_repetition_rides_it_out_in_every_stream_transport()
    {
        using var artifacts = new TempDirectory("it-silence-");
        var (exitCode, output) = HostingTests.RunBuild("RunAll", artifacts, "-p:Fault=Silence", "-p:SilenceSeconds=2", "-p:FaultAfterBytes=200000",
            "-p:Transports=TcpClientSingleThreadTest+TcpClient2+HttpRequest+GrpcStreaming+SoapSmallBatchesAsync+NetTcpSmallBatchesAsync+RestJson+WebSocketClient",
            "-p:RecordCounts=5000", "-p:Repetitions=1", "-p:Warmup=false", "-p:BatchSize=100", "-p:Peers=false");
        Assert.AreEqual(0, exitCode, output);
        var runs = MeasurementLog.Read(Path.Combine(artifacts, "results", "runs.jsonl"));
        Assert.HasCount(8, runs);
        Assert.IsTrue(runs.All(r => r.FaultInjected == true), string.Join("\n", runs));
        // Two seconds of nothing either way: every transport waits it out (no timeout is that short), with no break and every row once.
        foreach (var run in runs)
            Assert.IsTrue(run is { Completed: true, Fault: "Silence", Reconnects: 0 or null, RowsMatched: 5000, RowsDuplicated: 0 } && run.ElapsedSeconds >= 2, run.ToString());
        var silence = ResultsJson.Load(Path.Combine(artifacts, "results")).Fault("TcpClient2");
        Assert.AreEqual(("Silence", 5_000, 1, 1, 0, 0), (silence.Fault, silence.Records, silence.Runs, silence.Unbroken, silence.RowsLost, silence.RowsDuplicated));
        Assert.IsNull(silence.RecoverySeconds, "nothing to recover from");
        HostingTests.AssertEndedCleanly(artifacts);
    }
}
