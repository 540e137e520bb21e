namespace IntegrationTasks.Tests;

/// <summary>RunAll's verdicts: nothing asked for is ever silent — a failed transport is in every output with its code and message.</summary>
[TestClass]
[TestCategory("EndToEnd")]
public sealed class RunAllVerdictTests
{
    [TestMethod]
    [Timeout(300_000, CooperativeCancellation = true)] // one small RunAll
    public void A_transport_whose_server_cannot_start_is_reported_as_failed_with_its_code_everywhere()
    {
        using var artifacts = new TempDirectory("it-failed-");
        // The port is taken before RunAll starts: the server fails with IT4001, and the transport must not vanish from the results.
        using var squatter = new TcpListener(IPAddress.Loopback, 0);
        squatter.Start();
        var port = ((IPEndPoint)squatter.LocalEndpoint).Port;
        var (exitCode, output) = HostingTests.RunBuild("RunAll", artifacts, $"-p:Port={port}", "-p:Transports=DirectCopy+TcpClient2",
            "-p:RecordCounts=1000", "-p:Repetitions=1", "-p:Warmup=false", "-p:Peers=false");
        Assert.AreNotEqual(0, exitCode, output);
        StringAssert.Contains(output, "error IT4001");
        StringAssert.Contains(output, "Failed: TcpClient2 at 1,000 records: IT4001: ");
        var results = Path.Combine(artifacts, "results");
        StringAssert.Contains(File.ReadAllText(Path.Combine(results, "results.md")), "## Failed");
        Assert.IsTrue(ResultsJson.Load(results).HasRow("DirectCopy"), "the transport that ran is still measured");
        StringAssert.Contains(File.ReadAllText(Path.Combine(results, "report.html")), "<table id=\"failed\">");
        // Its row in the CSV, by column (the message, last, is quoted and may hold commas).
        var csv = File.ReadAllLines(Path.Combine(results, "results.csv"));
        var header = csv[0].Split(',');
        var row = csv.Single(l => l.StartsWith("TcpClient2,", StringComparison.Ordinal)).Split(',');
        string Cell(string column) => row[Array.IndexOf(header, column)];
        Assert.AreEqual(("1000", "false", "IT4001", "failed"), (Cell("records"), Cell("verified"), Cell("failedWith"), Cell("status")));
        var failed = ResultsJson.Load(results).Failed.Single();
        Assert.AreEqual(("TcpClient2", 1000, "IT4001"), (failed.Transport, failed.Records!.Value, failed.Code));
        HostingTests.AssertEndedCleanly(artifacts);
    }

    [TestMethod]
    [Timeout(300_000, CooperativeCancellation = true)]
    public void Interleaved_every_transport_of_a_server_that_cannot_start_is_reported_failed_and_the_others_run()
    {
        using var artifacts = new TempDirectory("it-failed-shared-");
        using var squatter = new TcpListener(IPAddress.Loopback, 0);
        squatter.Start();
        var port = ((IPEndPoint)squatter.LocalEndpoint).Port;
        // TCP 1's two clients share TcpTestServer, which cannot listen; TcpServer2 (another port, given it by PlanRounds) can.
        var (exitCode, output) = HostingTests.RunBuild("RunAll", artifacts, $"-p:Port={port}", "-p:Transports=TcpClientSingleThreadTest+TcpClientMultiThreadTest+TcpClient2",
            "-p:RecordCounts=1000", "-p:Repetitions=2", "-p:Warmup=false", "-p:Peers=false");
        Assert.AreNotEqual(0, exitCode, output);
        var failed = ResultsJson.Load(Path.Combine(artifacts, "results")).Failed;
        Assert.IsTrue(failed.Any(f => f is { Transport: "TcpClientSingleThreadTest", Code: "IT4001" }) && failed.Any(f => f is { Transport: "TcpClientMultiThreadTest", Code: "IT4003" }),
            string.Join("\n", failed));
        StringAssert.Contains(output, "TcpTestServer did not start");
        StringAssert.Contains(output, "so TcpClientMultiThreadTest was not run.");
        var runs = MeasurementLog.Read(Path.Combine(artifacts, "results", "runs.jsonl"));
        CollectionAssert.AreEqual(new[] { "TcpClient2", "TcpClient2" }, runs.Select(r => r.Transport).ToArray(), "no run of the unstarted server's transports");
        Assert.IsTrue(runs.All(r => r.Verified));
        StringAssert.Contains(output, "TcpServer2 stopped (exit code 0");
        HostingTests.AssertEndedCleanly(artifacts);
    }
}
