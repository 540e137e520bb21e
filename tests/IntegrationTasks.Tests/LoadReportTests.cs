namespace IntegrationTasks.Tests;

/// <summary>The many-clients section: curves from the runs, the saturation sentence's reasons, the table and the charts.</summary>
[TestClass]
[TestCategory("Unit")]
public sealed class LoadReportTests
{
    internal static LatencySummary Waits(params long[] microseconds)
    {
        var histogram = BatchLatency.NewHistogram();
        foreach (var value in microseconds)
            histogram.RecordValue(value);
        return LatencySummary.Of(histogram);
    }

    internal static Measurement Run(string transport, int clients, int records, double seconds, int repetition = 1, double? serverCpu = null,
        double clientCpu = 0.1, int? connections = null, long queue = 0, LatencySummary? latency = null) => new()
    {
        Transport = transport, Clients = clients, Records = records, ElapsedSeconds = seconds, Repetition = repetition, BatchSize = 100,
        Verified = true, ServerCpuSeconds = serverCpu, ClientCpuSeconds = clientCpu, ServerMaxConnections = connections,
        ServerThreadPoolMaxQueue = serverCpu is null ? null : queue, ServerThreadPoolMaxThreads = serverCpu is null ? null : 4, BatchLatency = latency,
    };

    [TestMethod]
    public void Curves_group_each_transport_by_clients_and_keep_the_ratio_to_PipelinedCopy_at_the_same_N()
    {
        Measurement[] runs =
        [
            Run("TcpClient2", 1, 1000, 1.0), Run("TcpClient2", 1, 1000, 1.2, repetition: 2), Run("TcpClient2", 4, 4000, 2.0),
            Run("TcpClient2", 4, 4000, 9.0, repetition: 0) with { Warmup = true },
            Run("PipelinedCopy", 1, 1000, 0.5), Run("PipelinedCopy", 4, 4000, 1.0),
            Run("GrpcClient", 1, 1000, 1.0), // one client only: no curve
        ];
        var curves = ClientLoad.Curves(runs);
        CollectionAssert.AreEqual(new[] { "TcpClient2", "PipelinedCopy" }, curves.Select(c => c.Label).ToArray(), "transports first, references after");
        var tcp = curves[0];
        CollectionAssert.AreEqual(new[] { 1, 4 }, tcp.Points.Select(p => p.Clients).ToArray());
        Assert.AreEqual(1.1, tcp.Points[0].Seconds.Mean, 1e-9);
        Assert.AreEqual(2000, tcp.Points[1].RecordsPerSecond, 1e-9, "the warm-up is left out");
        Assert.AreEqual(2.0, tcp.Points[1].RatioToPipelined!.Value, 1e-9);
        Assert.IsNull(curves[1].Points[0].RatioToPipelined);

        // RunAll keeps each record count: one curve for each.
        var runAll = ClientLoad.Curves([Run("TcpClient2", 1, 1000, 1), Run("TcpClient2", 2, 1000, 0.6), Run("TcpClient2", 1, 2000, 2), Run("TcpClient2", 2, 2000, 1.1)]);
        Assert.HasCount(2, runAll);
        Assert.IsTrue(runAll.All(c => c.Points.Count == 2 && c.Points.Select(p => p.Records).Distinct().Count() == 1));
    }

    [TestMethod]
    public void The_saturation_sentence_names_what_the_measurements_show()
    {
        // One connection at a time (the series' single-thread server): flat from 1 client.
        var oneAtATime = ClientLoad.Curves([Run("TcpTestServer", 1, 1000, 1.0, connections: 1), Run("TcpTestServer", 4, 4000, 3.9, connections: 1)])[0];
        // (The sentences' wording is in Snapshots/messages.txt.snap; here, the reason each names and its figures.)
        var turns = LoadReport.Saturation(oneAtATime, cores: 2);
        StringAssert.StartsWith(turns, "TcpTestServer: stops scaling at 1 client (1,000 records/s;");
        StringAssert.Contains(turns, "at most 1,026 at 4");
        StringAssert.Contains(turns, "at most 1 connection open for 4 clients");

        // As fast as the reference at the same N: the database work is the limit.
        var database = ClientLoad.Curves([Run("GrpcClient", 1, 1000, 1.0), Run("GrpcClient", 4, 4000, 3.8), Run("PipelinedCopy", 1, 1000, 0.9), Run("PipelinedCopy", 4, 4000, 3.5)])
            .Single(c => c.Transport == "GrpcClient");
        StringAssert.Contains(LoadReport.Saturation(database, 2), "1.11× PipelinedCopy at the same 1 clients");

        // CPU and the thread pool, read at the knee and at the most clients.
        var cpu = ClientLoad.Curves([Run("HttpRequest", 1, 1000, 1.0, serverCpu: 1.0, clientCpu: 0.8), Run("HttpRequest", 8, 8000, 7.5, serverCpu: 9, clientCpu: 6, queue: 40)])[0];
        var sentence = LoadReport.Saturation(cpu, 2);
        StringAssert.Contains(sentence, "CPU: server 1 and client 0.8 of the 2 cores");
        StringAssert.Contains(sentence, "up to 40 work items waited for its 4 threads");

        // The client database's one writer: 4 clients × 2 s, 4 s of it waiting for the write lock.
        var locked = ClientLoad.Curves([Run("TcpClient2", 1, 1000, 1.0) with { ClientLockWaitSeconds = 0 },
            Run("TcpClient2", 4, 4000, 2.0) with { ClientLockWaitSeconds = 4 }, Run("TcpClient2", 8, 8000, 3.9) with { ClientLockWaitSeconds = 20 }])[0];
        Assert.AreEqual(0.5, locked.Points[1].ClientLockShare!.Value, 1e-9);
        StringAssert.Contains(LoadReport.Saturation(locked, 2), "at 8 clients they spent 64 % of their time waiting");

        // Coded errors the server logged, and the clients' resumptions after them, are named first.
        var refused = ClientLoad.Curves([Run("TcpClientMultiThreadTest3", 1, 1000, 1.0),
            Run("TcpClientMultiThreadTest3", 4, 4000, 3.8) with { ServerErrors = new(StringComparer.Ordinal) { ["IT1003"] = 86, ["IT3007"] = 1 }, Reconnects = 88 }])[0];
        Assert.AreEqual("IT1003 × 86, IT3007 × 1", IntegrationTasks.Results.ServerLogErrors.Describe(refused.Points[1].ServerErrors));
        var refusedSentence = LoadReport.Saturation(refused, 2);
        StringAssert.Contains(refusedSentence, "at 4 clients the server logged IT1003 × 86, IT3007 × 1");
        StringAssert.Contains(refusedSentence, "reconnected 88 times");

        // Requests queued at the server (a broker's queue, an inbox): at least one waiting per client.
        var queued = ClientLoad.Curves([Run("RabbitMQDurable", 1, 1000, 1.0) with { ServerMaxRequestsWaiting = 0 },
            Run("RabbitMQDurable", 16, 16000, 15.5) with { ServerMaxRequestsWaiting = 97 }])[0];
        StringAssert.Contains(LoadReport.Saturation(queued, 2), "requests queued for the server: up to 97 waited");
        var fewQueued = ClientLoad.Curves([Run("RabbitMQDurable", 1, 1000, 1.0), Run("RabbitMQDurable", 16, 16000, 15.5) with { ServerMaxRequestsWaiting = 15 }])[0];
        Assert.IsFalse(LoadReport.Saturation(fewQueued, 2).Contains("queued", StringComparison.Ordinal), "fewer waiting than clients: not the reason");

        // Still scaling.
        var scaling = ClientLoad.Curves([Run("TcpClient2", 1, 1000, 1.0), Run("TcpClient2", 4, 4000, 1.5)])[0];
        StringAssert.StartsWith(LoadReport.Saturation(scaling, 2), "TcpClient2: still scaling at 4 clients (2,667 records/s");

        // A dip at one count followed by a rise is not where it stops.
        var dip = ClientLoad.Curves([Run("GrpcClient", 1, 1000, 1.0), Run("GrpcClient", 4, 4000, 4.4), Run("GrpcClient", 16, 16000, 10.0)])[0];
        StringAssert.StartsWith(LoadReport.Saturation(dip, 2), "GrpcClient: still scaling at 16 clients (1,600 records/s");

        // Nothing else: the batches' waits grew.
        var waits = ClientLoad.Curves([Run("NetTcpSmallBatches", 1, 1000, 1.0, latency: Waits(2000, 2000)), Run("NetTcpSmallBatches", 4, 4000, 3.9, latency: Waits(8000, 8000))])[0];
        var shared = LoadReport.Saturation(waits, 2);
        StringAssert.Contains(shared, "not CPU (0.1 of 2 cores)");
        StringAssert.Contains(shared, "waited 4× longer at 4 clients than at 1 (2 → 8 ms)");
    }

    [TestMethod]
    public void The_section_has_a_row_per_client_count_a_throughput_chart_and_a_percentile_distribution_at_the_most_clients()
    {
        var waits = Waits([.. Enumerable.Range(1, 1000).Select(v => (long)v * 100)]);
        Measurement[] runs =
        [
            Run("TcpClient2", 1, 1000, 1.0, serverCpu: 0.3, connections: 1, latency: waits) with { ReplyLatency = waits },
            Run("TcpClient2", 4, 4000, 2.0, serverCpu: 0.8, connections: 4, latency: waits) with { ServerPeakBytes = 300L << 20, ClientPeakGrowthBytes = 12L << 20 },
            Run("PipelinedCopy", 1, 1000, 0.5), Run("PipelinedCopy", 4, 4000, 1.0),
        ];
        var curves = ClientLoad.Curves(runs);
        var md = LoadReport.Markdown(curves, 2);
        StringAssert.Contains(md, "## Many clients at once");
        var table = MarkdownTable.With(md, "Clients");
        var tcp = table.RowsNamed("TcpClient2").ToDictionary(r => r["Clients"]);
        Assert.AreEqual(("4,000", "2,000", "2.00", "50.02", "90.05", "99.01", "99.90", "100.03"), (tcp["4"]["Records"], tcp["4"]["Records/s"],
            tcp["4"]["× PipelinedCopy (same N)"], tcp["4"]["p50 (ms)"], tcp["4"]["p90 (ms)"], tcp["4"]["p99 (ms)"], tcp["4"]["p99.9 (ms)"], tcp["4"]["Max (ms)"]));
        Assert.AreEqual(("–", "–", "0.40", "0.05", "4", "300", "12", "0"), (tcp["4"]["Reply p50 (ms)"], tcp["4"]["Reply p99 (ms)"], tcp["4"]["Server CPU (cores)"],
            tcp["4"]["Client CPU (cores)"], tcp["4"]["Server connections"], tcp["4"]["Server peak (MB)"], tcp["4"]["Client growth (MB)"], tcp["4"]["Reconnects"]));
        Assert.AreEqual(("1,000", "50.02", "99.01", "0.30", "1", "–"), (tcp["1"]["Records/s"], tcp["1"]["Reply p50 (ms)"], tcp["1"]["Reply p99 (ms)"],
            tcp["1"]["Server CPU (cores)"], tcp["1"]["Server connections"], tcp["1"]["Server peak (MB)"]));
        var copy = table.RowsNamed("PipelinedCopy").Single(r => r["Clients"] == "4");
        Assert.AreEqual(("4,000", "–"), (copy["Records/s"], copy["× PipelinedCopy (same N)"]));
        StringAssert.Contains(md, "- TcpClient2: still scaling at 4 clients (2,000 records/s");

        var html = LoadReport.Html(curves, 2);
        StringAssert.Contains(html, "<svg id=\"throughput-clients\"");
        var reference = html[html.IndexOf("data-transport=\"PipelinedCopy\"", StringComparison.Ordinal)..];
        StringAssert.Contains(reference[..reference.IndexOf("/>", StringComparison.Ordinal)], "stroke-dasharray=\"6 4\"", "the reference is dashed");
        StringAssert.Contains(html, "<svg id=\"latency-distribution\"");
        StringAssert.Contains(html, "data-transport=\"TcpClient2 at 4\"");
        // 1,000 batches resolve up to the 99.9th percentile (1/(1−p) ≤ 1,000): 0, 50, 75, 90, 95, 99, 99.5, 99.9 → 8 points.
        var line = html[html.IndexOf("data-transport=\"TcpClient2 at 4\"", StringComparison.Ordinal)..];
        Assert.AreEqual(8, line[..line.IndexOf("/>", StringComparison.Ordinal)].Split(',').Length - 1);
        Assert.AreEqual("", LoadReport.Markdown([], 2));

        // The build log's summary keeps its columns in line with the longer labels of many-client rows.
        var console = ReportContent.ConsoleSummary(ReportContent.Summarise(runs)).Split('\n', StringSplitOptions.RemoveEmptyEntries);
        Assert.AreEqual(1, console.Select(line => line.IndexOf(" mean ", StringComparison.Ordinal)).Distinct().Count(), string.Join("\n", console));
    }

    [TestMethod]
    public void A_reply_counts_from_the_request_to_its_arrival_beside_the_commit()
    {
        long now = 1; // 0 means "never sent"
        var ticksPerMs = System.Diagnostics.Stopwatch.Frequency / 1000;
        var latency = new BatchLatency(2) { Now = () => now };
        var committed = new CommittedBatches(new BatchPlan(2, 10), latency);
        latency.Sent(0);
        now += 3 * ticksPerMs;
        latency.Received(0);
        now += 7 * ticksPerMs;
        committed.Add(0);
        latency.Received(1); // never sent: not counted
        Assert.AreEqual(3, latency.SummarizeReplies()!.MaxMs, 0.01);
        Assert.AreEqual(10, latency.Summarize()!.MaxMs, 0.01);
        Assert.AreEqual(1, latency.SummarizeReplies()!.Batches);
    }
}

/// <summary>The server's open connections, read from /proc: accepted ones count, its own connections out do not.</summary>
[TestClass]
[TestCategory("EndToEnd")]
[DoNotParallelize]
public sealed class OpenConnectionsTests
{
    [TestMethod]
    public async Task Connections_accepted_on_a_listening_port_are_counted_and_connections_out_are_not()
    {
        using var listener = new System.Net.Sockets.TcpListener(System.Net.IPAddress.Loopback, 0);
        listener.Start();
        var port = ((System.Net.IPEndPoint)listener.LocalEndpoint).Port;
        var before = IntegrationTasks.Hosting.OpenConnections.Count()!.Value;
        var clients = Enumerable.Range(0, 3).Select(_ => new System.Net.Sockets.TcpClient()).ToList();
        var accepted = new List<System.Net.Sockets.TcpClient>();
        try
        {
            foreach (var client in clients)
            {
                await client.ConnectAsync(System.Net.IPAddress.Loopback, port);
                accepted.Add(await listener.AcceptTcpClientAsync());
            }
            // Three accepted (local port: the listener's); the three client ends are this process's too, but on ports it does not listen on.
            Assert.AreEqual(before + 3, IntegrationTasks.Hosting.OpenConnections.Count());
        }
        finally
        {
            clients.Concat(accepted).ToList().ForEach(c => c.Dispose());
        }
        await Eventually.WaitUntilAsync(() => IntegrationTasks.Hosting.OpenConnections.Count() == before, "the three closed");
    }
}

/// <summary>Several client machines' runs of one StartAt, merged into the one run they made together.</summary>
[TestClass]
[TestCategory("Unit")]
public sealed class ClientMachineRunsTests
{
    private static readonly DateTimeOffset Start = new(2026, 11, 24, 8, 0, 0, TimeSpan.Zero);

    private static Measurement Run(string machine, double seconds, int repetition = 1, DateTimeOffset? start = null)
    {
        var histogram = BatchLatency.NewHistogram();
        histogram.RecordValue(machine == "a" ? 1000 : 9000);
        return new()
        {
            Transport = "TcpClient2", Clients = 2, Records = 1000, BatchSize = 100, ElapsedSeconds = seconds, Repetition = repetition, Verified = true,
            StartAt = start ?? Start, ClientMachine = machine, BytesSent = 10, BytesReceived = 100, ClientCpuSeconds = 0.5,
            BatchLatency = LatencySummary.Of(histogram),
        };
    }

    [TestMethod]
    public void Runs_of_one_start_add_up_and_last_as_long_as_the_slowest_machine()
    {
        var merged = IntegrationTasks.Results.ClientMachineRuns.Merge([Run("a", 1.0), Run("b", 1.5), Run("a", 2.0, repetition: 2), Run("b", 2.5, repetition: 2),
            Run("a", 3.0, start: Start.AddMinutes(5)), new Measurement { Transport = "GrpcClient", Records = 1000, ElapsedSeconds = 1, Verified = true }]);
        Assert.HasCount(4, merged);
        var first = merged.Single(m => m is { ClientMachines: 2, Repetition: 1 });
        Assert.AreEqual((4, 2000, 1.5, 20L, 200L, 1.0), (first.Clients, first.Records, first.ElapsedSeconds, first.BytesSent, first.BytesReceived, first.ClientCpuSeconds));
        Assert.AreEqual(2, first.BatchLatency!.Batches);
        Assert.AreEqual(9, first.BatchLatency.MaxMs, 0.01);
        Assert.IsNull(first.ClientMachine);
        Assert.AreEqual("TcpClient2 (4 clients, 2 client machines)", IntegrationTasks.Results.RowKey.Concurrency(first).Label);
        Assert.IsNull(merged.Single(m => m.StartAt == Start.AddMinutes(5)).ClientMachines, "one machine alone at its start is its own run");

        var twice = Assert.ThrowsExactly<IntegrationTasks.Common.IntegrationException>(() => IntegrationTasks.Results.ClientMachineRuns.Merge([Run("a", 1), Run("a", 1)]));
        Assert.AreEqual(IntegrationTasks.Common.ErrorCodes.ResultsUnreadable, twice.Code);
        StringAssert.Contains(twice.Message, "2 runs from 1 client machines");
    }

    [TestMethod]
    public async Task A_start_time_that_is_not_a_time_or_is_far_away_is_a_coded_error()
    {
        foreach (var (startAt, message) in new[] { ("soon", "StartAt 'soon' is not a time"), (DateTimeOffset.UtcNow.AddHours(2).ToString("O"), "is more than an hour away") })
        {
            var engine = new FakeBuildEngine();
            var client = new IntegrationTasks.Tcp.TcpClient2 { StartAt = startAt };
            await using var databases = TestDatabases.Sqlite();
            Assert.IsFalse(client.For(databases, engine, totalBatches: 2, batchSize: 10).Execute());
            Assert.IsTrue(engine.HasErrorCode(IntegrationTasks.Common.ErrorCodes.InvalidParameter), engine.Log);
            StringAssert.Contains(engine.Log, message);
        }
    }
}

/// <summary>A server's coded warnings and errors, counted by code for each repetition from its log.</summary>
[TestClass]
[TestCategory("Unit")]
public sealed class ServerLogErrorsTests
{
    [TestMethod]
    public void Each_reading_counts_the_codes_written_since_the_last_one()
    {
        using var folder = new TempDirectory("it-serverlog-");
        var log = Path.Combine(folder, "TcpTestServer3.log");
        var state = new IntegrationTasks.Results.LogPosition();
        Assert.IsNull(IntegrationTasks.Results.ServerLogErrors.SinceLastReading(log, state), "no log, nothing read");
        File.WriteAllLines(log, ["TcpTestServer3 is ready at tcp://127.0.0.1:8081.",
            "Tcp.targets(52,5): warning IT1003: Closed the connection from 127.0.0.1:38818 after 0 requests: … 53300: sorry, too many clients already",
            "warning IT1003: Closed the connection from 127.0.0.1:38832 …", "Connection from 127.0.0.1:1 finished: 5 requests answered"]);
        CollectionAssert.AreEqual(new Dictionary<string, int> { ["IT1003"] = 2 }, IntegrationTasks.Results.ServerLogErrors.SinceLastReading(log, state));
        File.AppendAllLines(log, ["error IT2001: bad frame", "warning IT1003: again"]);
        CollectionAssert.AreEqual(new Dictionary<string, int> { ["IT1003"] = 1, ["IT2001"] = 1 }, IntegrationTasks.Results.ServerLogErrors.SinceLastReading(log, state),
            "only what the next repetition added");
        Assert.IsEmpty(IntegrationTasks.Results.ServerLogErrors.SinceLastReading(log, state)!);
        File.WriteAllLines(log, ["warning IT3007: dropped"]); // the server started again: a new, shorter log
        CollectionAssert.AreEqual(new Dictionary<string, int> { ["IT3007"] = 1 }, IntegrationTasks.Results.ServerLogErrors.SinceLastReading(log, state));
    }
}
