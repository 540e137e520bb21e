using TaskItem = Microsoft.Build.Utilities.TaskItem;

namespace IntegrationTasks.Tests;

[TestClass]
public sealed class ResultsTests
{
    [TestMethod]
    [TestCategory("Unit")]
    public void Statistics_match_hand_computed_values()
    {
        // 2, 4, 4, 4, 5, 5, 7, 9: mean 5, sample variance 32/7. Records/s in the report is the mean of each run's rate.
        var s = Summary.Of([2.0, 4, 4, 4, 5, 5, 7, 9]);
        Assert.AreEqual(8, s.Count);
        Assert.AreEqual(5.0, s.Mean, 1e-12);
        Assert.AreEqual(4.5, s.Median, 1e-12);
        Assert.AreEqual(Math.Sqrt(32.0 / 7), s.StdDev, 1e-12);
        Assert.AreEqual(2.0, s.Min);
        Assert.AreEqual(9.0, s.Max);

        var odd = Summary.Of([3.0, 1, 2]);
        Assert.AreEqual(2.0, odd.Median);
        Assert.AreEqual(1.0, odd.StdDev, 1e-12);
        Assert.AreEqual(0.0, Summary.Of([4.2]).StdDev);
    }

    internal static Measurement Run(string transport, int records, double seconds, int repetition) => new()
    {
        Transport = transport, Records = records, ElapsedSeconds = seconds, Repetition = repetition, BatchSize = 1000,
        BytesSent = records * 10L, BytesReceived = records * 290L, ClientPeakBytes = 100L << 20, Verified = true,
    };

    [TestMethod]
    [TestCategory("Unit")]
    public void The_report_ranks_transports_against_the_fastest_and_DirectCopy()
    {
        Measurement[] runs =
        [
            Run("DirectCopy", 1000, 1.0, 1), Run("DirectCopy", 1000, 3.0, 2),
            Run("TcpClient2", 1000, 3.0, 1), Run("TcpClient2", 1000, 5.0, 2),
            Run("TcpClient2", 2000, 8.0, 1),
        ];
        var rows = ReportContent.Summarise(runs);
        var tcp = rows.Single(r => r.Transport == "TcpClient2" && r.Records == 1000);
        Assert.AreEqual(4.0, tcp.Seconds.Mean);
        Assert.AreEqual(2.0, tcp.RatioToBaseline!.Value, 1e-12);
        Assert.AreEqual(100.0, tcp.PercentSlowerThanFastest, 1e-9);
        Assert.AreEqual(2.0, tcp.SecondsBehindFastest, 1e-12);
        Assert.AreEqual(300.0, tcp.MeanBytesPerRecord!.Value, 1e-12);
        var unmeasured = ReportContent.Summarise([Run("SoapSmallBatches", 1000, 1.0, 1) with { BytesSent = 0, BytesReceived = 0, BytesNotMeasured = true }]);
        Assert.IsNull(unmeasured.Single().MeanBytesPerRecord, "bytes the transport could not measure are not reported as 0");
        Assert.IsNull(rows.Single(r => r.Records == 2000).RatioToBaseline, "no baseline at 2000 records");

        using var folder = new TempDirectory("it-report-");
        var files = IntegrationTasks.Exporters.ReportFiles.Write(folder, runs, new Dictionary<string, string> { ["Provider"] = "Sqlite" },
            new ReportOptions { Series = [new SeriesEntry("TCP client (single thread)", 1079.72, "TcpClientSingleThreadTest"), new SeriesEntry("Tcp Client 2 (multi thread)", 355.43, "TcpClient2")] });
        Assert.HasCount(5, files); // json, csv, md, html, and the dated copy of the json
        var markdown = File.ReadAllText(Path.Combine(folder, "results.md"));
        // Two runs: t(0.975, 1) × 1.414 / √2 = 12.706 would be wider than the means, so no interval is printed and nothing is called
        // fastest or different; records/s is records over the mean time (1,000 / 2.000 s).
        var main = MarkdownTable.After(markdown, "## 1,000 records");
        var direct = main.Row("DirectCopy");
        Assert.AreEqual(("2.000", "n/a (2 runs)", "", "", "fastest mean (too few runs to tell)"),
            (direct["Mean (s)"], direct["±95% CI (s)"], direct["% slower"], direct["Difference (s)"], direct["Against the one above"]));
        Assert.AreEqual(("2.000", "1.414", "1.000", "3.000", "500", "1.00", "300", "100"), (direct["Median (s)"], direct["Std dev (s)"], direct["Min (s)"],
            direct["Max (s)"], direct["Records/s"], direct["× DirectCopy"], direct["Bytes/record"], direct["Client peak MB"]));
        var tcpRow = main.Row("TcpClient2");
        Assert.AreEqual(("4.000", "n/a (2 runs)", "100.00", "2.000", "too few runs to tell", "250", "2.00"), (tcpRow["Mean (s)"], tcpRow["±95% CI (s)"],
            tcpRow["% slower"], tcpRow["Difference (s)"], tcpRow["Against the one above"], tcpRow["Records/s"], tcpRow["× DirectCopy"]));
        Assert.AreEqual(("–", "–", "–"), (tcpRow["× PipelinedCopy (ratio of means)"], tcpRow["× peer"], tcpRow["Server peak MB"]), "no reference, no peer, no server measured");
        // The series' table, fastest first, each beside the transport that plays it (no 1,000,000-record run here: "–").
        var series = MarkdownTable.With(markdown, "The suite's transport");
        CollectionAssert.AreEqual(new[] { "Tcp Client 2 (multi thread)", "TCP client (single thread)" }, series.Rows.Select(r => r[0]).ToArray());
        Assert.AreEqual(("355.43", "TcpClient2", "–"), (series.Cell("Tcp Client 2 (multi thread)", "Seconds"),
            series.Cell("Tcp Client 2 (multi thread)", "The suite's transport"), series.Cell("Tcp Client 2 (multi thread)", "This run, 1,000,000 records (s)")));
        var csv = File.ReadAllLines(Path.Combine(folder, "results.csv"));
        Assert.HasCount(6, csv);
        // The run's key first (transport, kind, records, batch size, payload bytes and kind, clients, machines, rate, server work,
        // provider, network, latency, fault, TLS, hosts and their CPUs), then its figures.
        StringAssert.StartsWith(csv[1], "DirectCopy,Baseline,1000,1000,0,,1,1,,PerRecord,Sqlite,Loopback,,None,false,One,,1,false,1,1000,");
    }

    [TestMethod]
    [TestCategory("Unit")]
    public void Confidence_intervals_outliers_and_significance_match_hand_computed_values()
    {
        // Student's t quantiles from tables.
        Assert.AreEqual(12.7062047, StudentT.Quantile(0.975, 1), 1e-6);
        Assert.AreEqual(2.2621572, StudentT.Quantile(0.975, 9), 1e-6);
        Assert.AreEqual(2.0422725, StudentT.Quantile(0.975, 30), 1e-6);
        Assert.AreEqual(0.5, StudentT.Cdf(0, 7), 1e-12);

        // 2, 4, 4, 4, 5, 5, 7, 9: sd √(32/7); CI = t(0.975, 7) × sd / √8 = 2.3646243 × 2.1380899 / 2.8284271.
        var s = Summary.Of([2.0, 4, 4, 4, 5, 5, 7, 9]);
        Assert.AreEqual(2.3646243 * Math.Sqrt(32.0 / 7) / Math.Sqrt(8), s.Ci95, 1e-6);
        // Quartiles 4 and 5.5 (linear interpolation), fences 1.75 and 7.75: 9 is flagged.
        CollectionAssert.AreEqual(new[] { 9.0 }, s.Outliers.ToArray());

        // 1, 2, 3, 4, 100: quartiles 2 and 4, fences -1 and 7: 100 is flagged (and still counted in the mean).
        var skewed = Summary.Of([1.0, 2, 3, 4, 100]);
        CollectionAssert.AreEqual(new[] { 100.0 }, skewed.Outliers.ToArray());
        Assert.AreEqual(22.0, skewed.Mean, 1e-12);

        // Welch: means 10 and 12, sd 1, n 5 each: t = −√10, df = 8, two-sided p = 0.0133491 (the t density integrated numerically).
        var a = new Summary(5, 10, 10, 1, 9, 11);
        var b = new Summary(5, 12, 12, 1, 11, 13);
        Assert.AreEqual(0.0133491, Welch.PValue(a, b), 1e-6);
        Assert.AreEqual(1.0, Welch.PValue(a, a), 1e-12);
    }

    [TestMethod]
    [TestCategory("Unit")]
    public void Warmup_runs_are_reported_apart_and_outliers_by_repetition()
    {
        Measurement[] runs =
        [
            Run("TcpClient2", 1000, 9.0, 0) with { Warmup = true },
            Run("TcpClient2", 1000, 1.0, 1), Run("TcpClient2", 1000, 1.1, 2), Run("TcpClient2", 1000, 0.9, 3),
            Run("TcpClient2", 1000, 1.0, 4), Run("TcpClient2", 1000, 5.0, 5),
        ];
        var row = ReportContent.Summarise(runs).Single();
        Assert.AreEqual(5, row.Seconds.Count);
        Assert.AreEqual(9.0, row.WarmupSeconds);
        CollectionAssert.AreEqual(new[] { 5 }, row.OutlierRepetitions.ToArray());
        Assert.AreEqual("fastest", ReportContent.Verdict(row));
    }

    [TestMethod]
    [TestCategory("EndToEnd")]
    [DoNotParallelize]
    public async Task The_data_fingerprint_is_the_same_for_the_same_rows_whatever_the_provider()
    {
        await using var sqlite = TestDatabases.Sqlite();
        await using var postgres = await TestDatabases.PostgresAsync();
        foreach (var databases in new[] { sqlite, postgres })
            await new DataGenerator(databases.Server, NullEventLog.Instance).GenerateAsync(500, CancellationToken.None);
        var a = await IntegrationTasks.Data.DataSetFingerprint.OfAsync(sqlite.Server, 500, CancellationToken.None);
        Assert.AreEqual(a, await IntegrationTasks.Data.DataSetFingerprint.OfAsync(postgres.Server, 500, CancellationToken.None));
        Assert.AreNotEqual(a, await IntegrationTasks.Data.DataSetFingerprint.OfAsync(sqlite.Server, 499, CancellationToken.None));
    }

    [TestMethod]
    [TestCategory("EndToEnd")]
    [DoNotParallelize]
    public void The_HTML_report_renders_its_charts_in_a_real_browser()
    {
        Measurement[] runs =
        [
            // Three runs each: below three the report draws no interval at all.
            Run("DirectCopy", 1000, 1.0, 1), Run("DirectCopy", 1000, 1.2, 2), Run("DirectCopy", 1000, 1.1, 3),
            Run("TcpClient2", 1000, 0.8, 1), Run("TcpClient2", 1000, 0.9, 2), Run("TcpClient2", 1000, 0.85, 3),
            Run("HttpRequest", 1000, 1.5, 1), Run("HttpRequest", 1000, 1.7, 2), Run("HttpRequest", 1000, 1.6, 3),
        ];
        using var folder = new TempDirectory("it-html-");
        IntegrationTasks.Exporters.ReportFiles.Write(folder, runs, new Dictionary<string, string> { ["CPU"] = "test" },
            new ReportOptions { NotRun = [new NotRunEntry("MSMQ", "Windows only.", "", "836.12", "RabbitMQDurable")] });
        var report = Path.Combine(folder, "report.html");
        var html = File.ReadAllText(report);
        // The explorer's data and scripts are in the page; nothing is fetched (ExplorerBrowserTests drives it).
        Assert.Contains("<script type=\"application/json\" id=\"explorer-data\">", html);
        Assert.DoesNotContain("<script src", html);
        Assert.DoesNotContain("http://", html.Replace("http://www.w3.org", ""), "the report must not need the network");

        // Debian's Chromium, headless (the test command installs it): the DOM it builds, and a screenshot.
        using var chromiumProfile = new TempDirectory("it-chromium-");
        string[] flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
            "--disable-component-update", "--disable-sync", $"--user-data-dir={chromiumProfile}"];
        var (code, dom, errors) = RepositoryPaths.Run("/usr/bin/chromium", [.. flags, "--dump-dom", $"file://{report}"]);
        Assert.AreEqual(0, code, errors);
        // Time and throughput: no server ran (no server memory or CPU chart), and the client's costs are alike in every row of these
        // runs, so their charts, which would compare nothing, are left out.
        Assert.AreEqual(2, CountOf(dom, "<svg "), "two charts for the one record count");
        Assert.AreEqual(6, CountOf(dom, "<rect class=\"bar"), "a bar per transport per chart");
        Assert.AreEqual(3 * 3, CountOf(dom, "<line class=\"ci\""), "a confidence whisker (three lines) per transport on the time chart");
        StringAssert.Contains(dom, "data-transport=\"TcpClient2\"");
        StringAssert.Contains(dom, "<td>MSMQ</td>");

        // What a reader meets first, at 1,280 × 800, and the whole page (docs/report-*.png were taken the same way and looked at).
        foreach (var (size, name) in new[] { ("1280,800", "report-top.png"), ("1280,4000", "report-full.png") })
        {
            var screenshot = Path.Combine(folder, name);
            (code, _, errors) = RepositoryPaths.Run("/usr/bin/chromium", [.. flags, "--hide-scrollbars", $"--window-size={size}", $"--screenshot={screenshot}", $"file://{report}"]);
            Assert.AreEqual(0, code, errors);
            Assert.IsGreaterThan(10_000L, new FileInfo(screenshot).Length);
        }
    }

    private static int CountOf(string text, string part) => (text.Length - text.Replace(part, "").Length) / part.Length;

    [TestMethod]
    [TestCategory("Unit")]
    public void Scaling_fits_fixed_and_per_record_costs_and_finds_where_lines_cross()
    {
        var runs = new List<Measurement>();
        foreach (var records in new[] { 10_000, 100_000, 1_000_000 })
        {
            for (var repetition = 1; repetition <= 2; repetition++)
            {
                runs.Add(Run("Heavy", records, 1.0 + 2e-6 * records, repetition));  // 1 s to start, 2 µs a record
                runs.Add(Run("Light", records, 0.1 + 5e-6 * records, repetition));  // 0.1 s to start, 5 µs a record
                runs.Add(Run("Curved", records, 1e-12 * records * (double)records + 0.01, repetition));
            }
        }
        var fits = Scaling.Fit(runs).ToDictionary(f => f.Transport);
        Assert.AreEqual(1.0, fits["Heavy"].FixedSeconds, 1e-9);
        Assert.AreEqual(2.0, fits["Heavy"].MicrosecondsPerRecord, 1e-9);
        Assert.AreEqual(1.0, fits["Heavy"].RSquared, 1e-12);
        Assert.AreEqual("linear", fits["Heavy"].Linearity);
        StringAssert.StartsWith(fits["Curved"].Linearity, "not linear: records");
        // 1 + 2e-6 x = 0.1 + 5e-6 x at x = 300,000.
        var crossings = ScalingReport.Crossovers([.. fits.Values.Where(f => f.Transport != "Curved").OrderBy(f => f.MicrosecondsPerRecord)], 10_000, 1_000_000);
        CollectionAssert.AreEqual(new[] { "Heavy overtakes Light above about 300,000 records (its fixed cost is higher, its cost per record lower)." },
            crossings.ToArray());
    }

    [TestMethod]
    [TestCategory("Unit")]
    public void A_batch_size_sweep_is_reported_per_size_with_the_best_marked()
    {
        var runs = new List<Measurement>();
        foreach (var (batchSize, seconds) in new[] { (100, 2.0), (1000, 1.0), (5000, 1.05) })
            for (var repetition = 1; repetition <= 3; repetition++)
                runs.Add(Run("TcpClient2", 20_000, seconds + repetition * 0.01, repetition) with { BatchSize = batchSize });
        var sweep = ReportContent.BatchSweep(runs);
        StringAssert.Contains(sweep, "## Batch-size sweep: TcpClient2, 20,000 records");
        var table = MarkdownTable.With(sweep, "Batch size");
        Assert.AreEqual(("20", "1.020", "**best**"), (table.Cell("1,000", "Batches"), table.Cell("1,000", "Mean (s)"), table.Cell("1,000", "Against the best")));
        var small = table.Row("100");
        Assert.AreEqual(("200", "2.020", "0.025", "9,901", "slower (p<0.001)"),
            (small["Batches"], small["Mean (s)"], small["±95% CI (s)"], small["Records/s"], small["Against the best"]));
        // In the main tables each size is a method of its own, never averaged together.
        var rows = ReportContent.Summarise(runs);
        CollectionAssert.AreEquivalent(new[] { "TcpClient2 (batch 100)", "TcpClient2 (batch 1000)", "TcpClient2 (batch 5000)" },
            rows.Select(r => r.Transport).ToArray());
    }

    [TestMethod]
    [TestCategory("Unit")]
    public void Measurements_round_trip_through_the_results_log()
    {
        using var folder = new TempDirectory("it-log-");
        var path = Path.Combine(folder, "runs.jsonl");
        var run = Run("TcpClient2", 1000, 0.1 + 0.2, 1) with { ServerPeakBytes = 12345 };
        MeasurementLog.Append(path, run);
        MeasurementLog.Append(path, run with { Repetition = 2 });
        var back = MeasurementLog.Read(path);
        Assert.HasCount(2, back);
        Assert.AreEqual(run, back[0]);
        File.AppendAllText(path, "{not json\n");
        var e = Assert.ThrowsExactly<IntegrationException>(() => MeasurementLog.Read(path));
        Assert.AreEqual(ErrorCodes.ResultsUnreadable, e.Code);
    }

    [TestMethod]
    [TestCategory("Unit")]
    public void The_report_counts_the_warm_ups_and_says_how_long_the_JIT_compiled_during_the_measured_runs()
    {
        var quiet = new[]
        {
            Run("TcpClient2", 1000, 3.0, 0) with { Warmup = true, ClientJitSeconds = 0.9 },
            Run("TcpClient2", 1000, 2.0, 0) with { Warmup = true, ClientJitSeconds = 0.3 },
            Run("TcpClient2", 1000, 1.0, 1) with { ClientJitSeconds = 0.010 },
            Run("TcpClient2", 1000, 1.0, 2) with { ClientJitSeconds = 0.030 },
        };
        var rows = ReportContent.Summarise(quiet);
        Assert.AreEqual((2, 3.0), (rows[0].WarmupRuns, rows[0].WarmupSeconds!.Value), "the first warm-up's time: the coldest");
        Assert.AreEqual(20.0, rows[0].Costs!.ClientJitMsPerRun!.Value, 1e-9, "the measured runs only");
        Assert.AreEqual(0.03, rows[0].Costs!.ClientJitMaxShare!.Value, 1e-9);
        StringAssert.Contains(ReportContent.Markdown(rows, new Dictionary<string, string>()), "(mean of 2 runs after 2 warm-up runs,");
        var jit = NoiseReport.JitSentence(rows);
        StringAssert.Contains(jit, "20 ms a run on average");
        StringAssert.Contains(jit, "at most 3.0 % of a run's time (TcpClient2, 1,000 records)");
        StringAssert.Contains(jit, "compiled before the measured runs");

        var warming = ReportContent.Summarise([.. quiet.Take(3), quiet[3] with { ClientJitSeconds = 0.4 }]);
        StringAssert.Contains(NoiseReport.JitSentence(warming), "at most 40.0 % of a run's time (TcpClient2, 1,000 records)");
        StringAssert.Contains(NoiseReport.JitSentence(warming), "More than 5 %");
        Assert.AreEqual("", NoiseReport.JitSentence(ReportContent.Summarise([Run("TcpClient2", 1000, 1.0, 1)])), "older results: not measured, nothing said");
    }

    [TestMethod]
    [TestCategory("Unit")]
    public async Task A_run_records_its_client_s_GC_collections_and_pauses_and_the_costs_table_shows_the_pause_per_measured_run()
    {
        var sampler = new RuntimeSampler(TimeSpan.FromSeconds(10));
        GC.Collect(2, GCCollectionMode.Forced, blocking: true);
        var figures = await sampler.StopAsync();
        Assert.IsGreaterThanOrEqualTo(1, figures.GcCollections[2], "the forced gen 2 collection");
        Assert.IsGreaterThanOrEqualTo(figures.GcCollections[1], figures.GcCollections[0], "a gen 1 or 2 collection counts in gen 0 too");
        Assert.IsGreaterThan(0.0, figures.GcPauseSeconds, "a blocking collection pauses the threads");

        var rows = ReportContent.Summarise(
        [
            Run("PipelinedCopy", 1000, 3.0, 0) with { Warmup = true, ClientGcPauseSeconds = 0.9 },
            Run("PipelinedCopy", 1000, 1.0, 1) with { ClientGcPauseSeconds = 0.240, ClientGcCollections = [22, 8, 1] },
            Run("PipelinedCopy", 1000, 1.0, 2) with { ClientGcPauseSeconds = 0.260, ClientGcCollections = [22, 9, 1] },
        ]);
        Assert.AreEqual(250.0, rows[0].Costs!.ClientGcPauseMsPerRun!.Value, 1e-9, "the measured runs only");
        var column = ReportColumns.Costs.Single(c => c.Id == "clientGcPauseMsPerRun");
        Assert.AreEqual(("Client GC pause ms / run", "250"), (column.Header, column.Cell(rows[0])));
        Assert.IsNull(ReportContent.Summarise([Run("PipelinedCopy", 1000, 1.0, 1)])[0].Costs!.ClientGcPauseMsPerRun, "older results: not measured");
    }

    [TestMethod]
    [TestCategory("Unit")]
    public void A_queue_transports_broker_readings_are_averaged_per_record_and_the_broker_table_shows_them()
    {
        var rows = ReportContent.Summarise(
        [
            Run("NatsJetStream", 1000, 2.0, 0) with { Warmup = true, BrokerCpuSeconds = 9, BrokerPeakBytes = 900 << 20, BrokerStorageWriteBytes = 9_000_000 },
            Run("NatsJetStream", 1000, 2.0, 1) with { BrokerCpuSeconds = 0.4, BrokerPeakBytes = 30 << 20, BrokerStorageWriteBytes = 600_000 },
            Run("NatsJetStream", 1000, 2.0, 2) with { BrokerCpuSeconds = 0.6, BrokerPeakBytes = 40 << 20, BrokerStorageWriteBytes = 800_000 },
            Run("PipelinedCopy", 1000, 1.0, 1),
        ]);
        var jetStream = rows.Single(r => r.Transport == "NatsJetStream").Broker!;
        Assert.AreEqual(500.0, jetStream.CpuMsPer1000, 1e-9, "the measured runs only: 0.5 s a run over 1,000 records");
        Assert.AreEqual(0.25, jetStream.Cores, 1e-9);
        Assert.AreEqual(40L << 20, jetStream.PeakBytes);
        Assert.AreEqual(700.0, jetStream.StorageWriteBytesPerRecord!.Value, 1e-9);
        Assert.IsNull(rows.Single(r => r.Transport == "PipelinedCopy").Broker, "no broker, no row in the broker table");
        var cells = ReportColumns.Broker.Select(c => c.Cell(rows.Single(r => r.Transport == "NatsJetStream"))).ToList();
        CollectionAssert.AreEqual(new[] { "NatsJetStream", "500.0", "0.25", "40", "700" }, cells);
    }

    [TestMethod]
    [TestCategory("Unit")]
    public void The_repetitions_the_report_states_are_counted_per_row_each_client_count_and_payload_its_own()
    {
        // Found by a RunAll of -p:Clients=1+16 with 10 repetitions, whose report said 20.
        Measurement[] runs =
        [
            Run("NatsClient", 1000, 1.0, 0) with { Warmup = true },
            .. Enumerable.Range(1, 10).Select(r => Run("NatsClient", 1000, 1.0, r) with { Clients = 1 }),
            .. Enumerable.Range(1, 10).Select(r => Run("NatsClient", 1000, 1.0, r) with { Clients = 16 }),
            .. Enumerable.Range(1, 10).Select(r => Run("NatsClient", 1000, 1.0, r) with { Clients = 1, PayloadBytes = 1024 }),
            .. Enumerable.Range(1, 5).Select(r => Run("PipelinedCopy", 1000, 1.0, r)),
            // A LatencySweep: a row a round trip.
            .. Enumerable.Range(1, 10).Select(r => Run("TcpClient2", 1000, 1.0, r) with { LatencyMs = 1 }),
            .. Enumerable.Range(1, 10).Select(r => Run("TcpClient2", 1000, 1.0, r) with { LatencyMs = 40 }),
        ];
        Assert.AreEqual("5, 10", IntegrationTasks.Results.ReportEnvironment.MeasuredRepetitions(runs));
    }

    [TestMethod]
    [TestCategory("Unit")]
    public void WriteReport_task_writes_the_files_and_prints_a_summary()
    {
        using var folder = new TempDirectory("it-report-");
        var log = Path.Combine(folder, "runs.jsonl");
        MeasurementLog.Append(log, Run("DirectCopy", 1000, 1.0, 1));
        MeasurementLog.Append(log, Run("TcpClient2", 1000, 1.5, 1));
        var engine = new FakeBuildEngine();
        var property = new TaskItem("Provider");
        property.SetMetadata("Value", "Sqlite");
        using var databases = new DisposableSqlite();
        new DataGenerator(databases.Value.Server, NullEventLog.Instance).GenerateAsync(1000, CancellationToken.None).GetAwaiter().GetResult();
        var task = new IntegrationTasks.Exporters.WriteReport
        {
            BuildEngine = engine, ResultsFile = log, OutputDirectory = folder, RunProperties = [property],
            RepositoryRoot = RepositoryPaths.Root, ServerConnString = databases.Value.Server.ConnectionString,
        };
        Assert.IsTrue(task.Execute(), engine.Log);
        Assert.HasCount(5, task.Files); // json, csv, md, html, and the dated copy of the json
        var environment = ResultsJson.Load(folder).Environment;
        Assert.IsTrue(environment.ContainsKey("CPU") && environment.ContainsKey("MSBuild"), string.Join(", ", environment.Keys));
        StringAssert.StartsWith(environment["Database"], "SQLite 3.");
        StringAssert.StartsWith(environment["Data set"], "sha256:");
        StringAssert.Contains(environment["Data set"], "over 1,000 rows");
        Assert.AreNotEqual("unknown", environment["Git commit"]);
        Assert.AreEqual("Sqlite", environment["Provider"]);
        StringAssert.Contains(engine.Log, "1.50× DirectCopy");
    }
}
