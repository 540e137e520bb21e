namespace IntegrationTasks.Tests;

/// <summary>Every batch of a real transfer is timed from its request to its commit, and the report shows the percentiles.</summary>
[TestClass]
[TestCategory("EndToEnd")]
public sealed class BatchLatencyTransferTests
{
    [TestMethod]
    [DynamicData(nameof(TcpGeneration.Names), typeof(TcpGeneration))]
    public async Task Every_batch_of_a_transfer_is_timed_and_the_report_shows_its_percentiles(string generation)
    {
        await using var databases = await TransferChecks.WithRecordsAsync("Sqlite", 2000);
        await using var server = new RunningTcpServer(databases.Server, TcpGeneration.All[generation]);
        using var folder = new TempDirectory("it-latency-");
        var engine = new FakeBuildEngine();
        var client = TcpGeneration.All[generation].NewClient();
        client.HostName = "127.0.0.1";
        client.Port = server.Port;
        client.ResultFile = Path.Combine(folder, "run.json");
        Assert.IsTrue(client.For(databases, engine, totalBatches: 40, batchSize: 50).Execute(), engine.Log);

        var run = MeasurementLog.ReadSingle(client.ResultFile);
        var latency = run.BatchLatency;
        Assert.IsNotNull(latency, "the run recorded no batch latency");
        Assert.AreEqual(40, latency.Batches, "one value per batch");
        Assert.IsGreaterThan(0, latency.P50Ms);
        Assert.IsLessThanOrEqualTo(latency.P99Ms, latency.P50Ms);
        Assert.IsGreaterThanOrEqualTo(latency.P99Ms, latency.MaxMs);
        StringAssert.Contains(engine.Log, "batch latency (request sent to committed) p50");

        // Three measured runs: their histograms add up to 120 batches in the summary, and results.md shows the row.
        var runs = Enumerable.Range(1, 3).Select(r => run with { Repetition = r }).ToList();
        var summary = ReportContent.Summarise(runs).Single();
        Assert.AreEqual(120, summary.BatchLatency!.Batches);
        Assert.AreEqual(latency.P99Ms, summary.BatchLatency.P99Ms, 1e-9, "the same batches three times: the same percentiles");
        var table = ReportContent.BatchLatencyTable([summary]);
        CollectionAssert.AreEqual(new[] { "Method", "Batches", "p50 (ms)", "p90 (ms)", "p99 (ms)", "p99.9 (ms)", "Max (ms)" },
            MarkdownTable.All(table).Single().Headers.ToArray());
        StringAssert.Contains(table, $"| {run.Transport} | 120 | ");
        StringAssert.Contains(ReportContent.Csv(runs).Split('\n')[0], "batchP50Ms,batchP99Ms,batchP999Ms,batchMaxMs,status,message");
    }
}
