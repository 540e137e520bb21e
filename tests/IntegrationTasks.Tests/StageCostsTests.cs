namespace IntegrationTasks.Tests;

/// <summary>The StageCosts lab: each stage of the per-record path measured alone, and recorded in the report.</summary>
[TestClass]
[TestCategory("EndToEnd")]
public sealed class StageCostsTests
{
    [TestMethod]
    [DataRow("Sqlite")]
    [DataRow("PostgreSql")]
    [DataRow("MariaDb")]
    public async Task Every_stage_is_measured_on_real_rows_and_reported(string provider)
    {
        await using var databases = await TransferChecks.WithRecordsAsync(provider, 1000);
        using var results = new TempDirectory("it-stages-");
        var engine = new FakeBuildEngine();
        var task = new IntegrationTasks.Labs.StageCostsTask
        {
            BuildEngine = engine, ServerProvider = provider, ServerConnString = databases.Server.ConnectionString, ClientProvider = provider,
            ClientConnString = databases.Client.ConnectionString, ResultsDirectory = results, Records = 1000, BatchSize = 500,
        };
        Assert.IsTrue(task.Execute(), engine.Log);
        var run = IntegrationTasks.Labs.StageCostsReport.Load(results)!;
        // Base64's floor is measured only with a payload of bytes to encode.
        Assert.HasCount(12, run.Stages);
        // Warmed up first (the JIT's tiers made the figures depend on the record count): at least three batches of the two there
        // are, so the warm-up goes round them again, and the measured batches still insert every row once (verified below).
        Assert.IsGreaterThanOrEqualTo(IntegrationTasks.Labs.StageCosts.MinimumWarmUpBatches, run.WarmUpBatches);
        // Every stage timed; every one allocates but the walk over JSON's tokens and the floors, which keep nothing.
        Assert.IsTrue(run.Stages.All(s => s.MicrosecondsPerRecord > 0 && (s.BytesAllocatedPerRecord > 0 || s.Stage == IntegrationTasks.Labs.StageCosts.JsonTokens
                                                                      || s.Stage.StartsWith("Floor", StringComparison.Ordinal))),
            string.Join("; ", run.Stages));
        // The insert stage really inserted: every row is on the client.
        var report = await new TransferVerifier(databases.Server, databases.Client).CompareAsync(1000, CancellationToken.None);
        Assert.IsTrue(report.Success, report.Describe());
        var markdown = IntegrationTasks.Results.ReportSections.In(results).Single().Document().Markdown();
        StringAssert.Contains(MarkdownTable.Line(markdown, "## StageCosts: "), $"({provider}, 1,000 records in batches of 500");
        StringAssert.Contains(markdown, $"Timed after {run.WarmUpBatches:N0} batches");
        Assert.IsTrue(MarkdownTable.With(markdown, "Bytes allocated / record").HasRow(IntegrationTasks.Labs.StageCosts.XmlIn));
        Assert.IsTrue(MarkdownTable.With(markdown, "Bytes allocated / record").HasRow(IntegrationTasks.Labs.StageCosts.JsonTokens));
        // The encodings side by side, each read back equal (the lab checks it): protobuf the smallest.
        var encodings = MarkdownTable.With(markdown, "Out + in µs / record");
        CollectionAssert.AreEqual(new[] { "XML", "JSON", "Protobuf", "Floor: copy" }, encodings.Rows.Select(r => r[0]).ToArray());
        Assert.AreEqual("1.00", encodings.Row("Protobuf")["× protobuf"]);
        var size = new[] { "XML", "JSON", "Protobuf" }.ToDictionary(e => e, e => double.Parse(encodings.Row(e)["Bytes / record"], System.Globalization.CultureInfo.InvariantCulture));
        Assert.IsTrue(size["Protobuf"] < size["JSON"] && size["Protobuf"] < size["XML"], string.Join(", ", size));

        task.Records = 1100;
        engine = new FakeBuildEngine();
        task.BuildEngine = engine;
        Assert.IsFalse(task.Execute());
        Assert.IsTrue(engine.HasErrorCode(ErrorCodes.InvalidParameter), engine.Log);
    }

    [TestMethod]
    [DataRow("Text")]
    [DataRow("Bytes")]
    public async Task With_a_payload_the_batches_hold_BatchBytes_and_each_encoding_is_costed_per_KiB_beside_its_floors(string kind)
    {
        await using var databases = TestDatabases.Sqlite();
        var payload = new PayloadShape(4096, Enum.Parse<PayloadKind>(kind));
        await new DataGenerator(databases.Server, NullEventLog.Instance) { Payload = payload }.GenerateAsync(600, CancellationToken.None);
        using var results = new TempDirectory("it-stages-");
        var engine = new FakeBuildEngine();
        var task = new IntegrationTasks.Labs.StageCostsTask
        {
            BuildEngine = engine, ServerConnString = databases.Server.ConnectionString, ClientConnString = databases.Client.ConnectionString,
            ResultsDirectory = results, Records = 600, BatchSize = 1000, PayloadBytes = 4096, PayloadKind = kind, BatchBytes = 1 << 20,
        };
        Assert.IsTrue(task.Execute(), engine.Log);
        var run = IntegrationTasks.Labs.StageCostsReport.Load(results)!;
        // 1 MiB a batch holds 256 rows of 4 KiB: two whole batches of the 600 rows.
        Assert.AreEqual((512, 256, 4096, kind), (run.Records, run.BatchSize, run.PayloadBytes, run.PayloadKind));
        var markdown = IntegrationTasks.Results.ReportSections.In(results).Single().Document().Markdown();
        var encodings = MarkdownTable.With(markdown, "Out + in µs / KiB of payload");
        // Base64's floor is what XML and JSON carry bytes as; text has none.
        CollectionAssert.AreEqual(kind == "Bytes" ? new[] { "XML", "JSON", "Protobuf", "Floor: base64", "Floor: copy" } : new[] { "XML", "JSON", "Protobuf", "Floor: copy" },
            encodings.Rows.Select(r => r[0]).ToArray());
        foreach (var encoding in new[] { "XML", "JSON", "Protobuf" })
        {
            var row = encodings.Row(encoding);
            var perKiB = double.Parse(row["Out + in µs / KiB of payload"], System.Globalization.CultureInfo.InvariantCulture);
            Assert.AreEqual(double.Parse(row["Out + in µs / record"], System.Globalization.CultureInfo.InvariantCulture) / 4, perKiB, 0.01, encoding);
            // The text carried whole: every encoding's record is at least the payload.
            Assert.IsGreaterThanOrEqualTo(4096, double.Parse(row["Bytes / record"], System.Globalization.CultureInfo.InvariantCulture), encoding);
        }
    }
}
