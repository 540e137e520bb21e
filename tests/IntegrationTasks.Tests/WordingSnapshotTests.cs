namespace IntegrationTasks.Tests;

/// <summary>
/// The wording, kept in two files other tests leave alone: results.md for a fixed set of runs (Snapshots/results.md.snap), and the messages,
/// verdicts and report lines other tests check by their values (Snapshots/messages.txt.snap), each rendered from a fixed case. Refreshed as
/// <see cref="Snapshot"/> says; a sentence reworded changes a snapshot only.
/// </summary>
[TestClass]
[TestCategory("Unit")]
[TestCategory("Snapshot")]
public sealed class WordingSnapshotTests
{
    private static readonly DateTimeOffset Start = new(2026, 1, 1, 0, 0, 0, TimeSpan.Zero);

    private static Measurement Run(string transport, double seconds, int round, RunKind kind = RunKind.Transport, string work = "PerRecord",
        bool warmup = false, int position = 0) => new()
    {
        Transport = transport, Kind = kind, Records = 20_000, BatchSize = 1000, Repetition = warmup ? 0 : round, Warmup = warmup, ElapsedSeconds = seconds,
        ServerWork = work, Verified = true, RoundSeed = 7, ClientPeakBytes = 200L << 20, BytesSent = 100_000, BytesReceived = 2_000_000,
        ClientCpuSeconds = seconds * 0.8, ClientAllocatedBytes = 40_000_000, Timestamp = Start.AddSeconds(round * 60 + position * 5),
    };

    /// <summary>Three rounds of the references, two transports (one reading ranges), the peer; a warm-up each.</summary>
    private static List<Measurement> Runs()
    {
        (string Name, double Seconds, RunKind Kind, string Work)[] transports =
        [
            ("DirectCopy", 1.60, RunKind.Baseline, "PerRecord"), ("PipelinedCopy", 1.00, RunKind.Reference, "PerRecord"),
            ("PipelinedCopyRange", 0.80, RunKind.Reference, "Range"), ("TcpClient2", 1.40, RunKind.Transport, "PerRecord"),
            ("FileTransferRequest", 1.20, RunKind.Transport, "Range"), ("Peer: SQLite ATTACH", 0.30, RunKind.Peer, "PerRecord"),
        ];
        var runs = new List<Measurement>();
        for (var i = 0; i < transports.Length; i++)
        {
            var (name, seconds, kind, work) = transports[i];
            runs.Add(Run(name, seconds * 2, 0, kind, work, warmup: true, position: i));
            for (var round = 1; round <= 3; round++)
                runs.Add(Run(name, seconds * (1 + 0.02 * ((round + i) % 3)), round, kind, work, position: i));
        }
        return runs;
    }

    [TestMethod]
    public void The_report_s_wording_is_as_in_its_snapshot()
    {
        using var folder = new TempDirectory("it-snapshot-");
        WriteFixedReport(folder);
        Snapshot.AssertMatches("results.md", File.ReadAllText(Path.Combine(folder, "results.md")));
        // The page too, byte for byte: its sections, charts and explorer data, for the same fixed case.
        Snapshot.AssertMatches("report.html", File.ReadAllText(Path.Combine(folder, "report.html")));
    }

    [TestMethod]
    public void The_same_report_s_results_json_reads_back_as_the_types_it_was_written_from()
    {
        using var folder = new TempDirectory("it-json-");
        WriteFixedReport(folder);
        var results = ResultsJson.Load(folder);
        Assert.AreEqual("two cores", results.Environment["CPU"]);
        var tcp = results.Row("TcpClient2");
        Assert.AreEqual((20_000, 3, "XML", "PipelinedCopy"), (tcp.Records, tcp.Seconds.Count, tcp.Encoding, tcp.Reference));
        Assert.AreEqual(1.4, tcp.PairedRatioToPipelined!.Mean, 0.05);
        Assert.IsTrue(tcp.PairedRatioToPipelined.HasInterval);
        Assert.AreEqual(20_000 / tcp.Seconds.Mean, tcp.MeanRecordsPerSecond, 1);
        Assert.IsFalse(results.HasRow("MSMQ"));
        Assert.AreEqual(("MSMQ", "836.12", "RabbitMQDurable"), (results.NotRun.Single().Transport, results.NotRun.Single().SeriesSeconds, results.NotRun.Single().Replacement));
        Assert.AreEqual(("GrpcClient", "IT4001", 20_000), (results.Failed.Single().Transport, results.Failed.Single().Code, results.Failed.Single().Records!.Value));
        Assert.AreEqual(4, results.Noise.Count);
        Assert.AreEqual("Sqlite", results.Noise.Single(n => n.Phase == "After" && n.Loop == MachineNoise.DatabaseLoop).Provider);
        Assert.IsEmpty(results.Faults);
    }

    private static void WriteFixedReport(string folder) =>
        IntegrationTasks.Exporters.ReportFiles.Write(folder, Runs(), new Dictionary<string, string> { ["CPU"] = "two cores" }, new ReportOptions
        {
            NotRun = [new NotRunEntry("MSMQ", "Windows only.", "", "836.12", "RabbitMQDurable")],
            Series = [new SeriesEntry("Tcp Client 2 (multi thread)", 355.43, "TcpClient2")],
            Failed = [new FailedEntry("GrpcClient", 20_000, "IT4001", "Port 8085 on 127.0.0.1 is already in use.")],
            Encodings = new Dictionary<string, string> { ["TcpClient2"] = "XML", ["FileTransferRequest"] = "XML file" },
            Noise = [.. new[] { "Before", "After" }.SelectMany(phase => new[]
            {
                NoiseReading.Of(phase, MachineNoise.Cpu, [10.0, 10.1, 9.9, 10.0]),
                NoiseReading.Of(phase, MachineNoise.DatabaseLoop, [20.0, 21.0, 19.0, 20.0]) with { Provider = "Sqlite" },
            })],
        });

    private readonly StringBuilder text = new();

    private void Add(string scenario, string message) => text.Append("## ").Append(scenario).Append('\n').Append(message.TrimEnd()).Append("\n\n");

    [TestMethod]
    public void The_messages_wording_is_as_in_its_snapshot()
    {
        StopAtPrecision();
        Saturation();
        MachineNoiseWarnings();
        Progress();
        FaultOutcomes();
        Snapshot.AssertMatches("messages.txt", text.ToString());
    }

    private void Saturation()
    {
        static Measurement Run(string transport, int clients, double seconds, double? serverCpu = null, double clientCpu = 0.1, int? connections = null,
            long queue = 0, LatencySummary? latency = null) =>
            LoadReportTests.Run(transport, clients, clients * 1000, seconds, serverCpu: serverCpu, clientCpu: clientCpu, connections: connections, queue: queue, latency: latency);
        Measurement[][] cases =
        [
            [Run("TcpTestServer", 1, 1.0, connections: 1), Run("TcpTestServer", 4, 3.9, connections: 1)],
            [Run("GrpcClient", 1, 1.0), Run("GrpcClient", 4, 3.8), Run("PipelinedCopy", 1, 0.9), Run("PipelinedCopy", 4, 3.5)],
            [Run("HttpRequest", 1, 1.0, serverCpu: 1.0, clientCpu: 0.8), Run("HttpRequest", 8, 7.5, serverCpu: 9, clientCpu: 6, queue: 40)],
            [Run("TcpClient2", 1, 1.0) with { ClientLockWaitSeconds = 0 }, Run("TcpClient2", 4, 2.0) with { ClientLockWaitSeconds = 4 },
                Run("TcpClient2", 8, 3.9) with { ClientLockWaitSeconds = 20 }],
            [Run("TcpClientMultiThreadTest3", 1, 1.0),
                Run("TcpClientMultiThreadTest3", 4, 3.8) with { ServerErrors = new(StringComparer.Ordinal) { ["IT1003"] = 86, ["IT3007"] = 1 }, Reconnects = 88 }],
            [Run("RabbitMQDurable", 1, 1.0) with { ServerMaxRequestsWaiting = 0 }, Run("RabbitMQDurable", 16, 15.5) with { ServerMaxRequestsWaiting = 97 }],
            [Run("RestJson", 1, 1.0), Run("RestJson", 4, 1.5)],
            [Run("NetTcpSmallBatches", 1, 1.0, latency: LoadReportTests.Waits(2000, 2000)), Run("NetTcpSmallBatches", 4, 3.9, latency: LoadReportTests.Waits(8000, 8000))],
        ];
        foreach (var runs in cases)
        {
            var curve = ClientLoad.Curves(runs)[0];
            Add($"Saturation of {curve.Transport}", LoadReport.Saturation(curve, cores: 2));
        }
    }

    private void MachineNoiseWarnings()
    {
        NoiseReading[] noisy =
        [
            NoiseReading.Of("Before", MachineNoise.Cpu, [10, 10.1, 9.9, 10]), NoiseReading.Of("Before", MachineNoise.DatabaseLoop, [5, 5.05, 4.95, 5]),
            NoiseReading.Of("After", MachineNoise.Cpu, [10, 16, 10, 10]), NoiseReading.Of("After", MachineNoise.DatabaseLoop, [6, 6, 6, 6]),
        ];
        Add("RunAll's noise warning", MachineNoise.BuildWarning(noisy)!);
        Add("The noise section, noisy, with its diagnostics", NoiseReport.Markdown(noisy, [], [], diagnostics: true));
        string[] transports = ["PipelinedCopy", "GrpcClient", "TcpClient2", "RestJson"];
        var spells = MachineNoiseTests.Rounds(transports, 6, i => i / 4 % 2 == 0 ? 1.2 : 1.0, cpuSlowsToo: true);
        Add("Spells, the CPU slowing too", NoiseReport.SpellsSentence(NoiseReport.Spells.Of(spells)));
        var taken = MachineNoiseTests.Rounds(transports, 6, i => i / 4 % 2 == 0 ? 1.2 : 1.0, cpuSlowsToo: false)
            .Select(r => r with { HostStealSeconds = r.ElapsedSeconds / (1.0 + Array.IndexOf(transports, r.Transport)) > 1.1 ? 0.2 * r.ElapsedSeconds : 0 }).ToList();
        Add("Spells and the hypervisor's steal", NoiseReport.SpellsSentence(NoiseReport.Spells.Of(taken)));
        var postgres = new[] { NoiseReading.Of("Before", MachineNoise.DatabaseLoop, [100, 180, 60, 110]), NoiseReading.Of("After", MachineNoise.DatabaseLoop, [70, 75, 60, 80]) }
            .Select(r => r with { Provider = "PostgreSql" }).ToList();
        Add("The noise section on PostgreSQL, with its diagnostics", NoiseReport.Markdown(postgres, [], diagnostics: true));
    }

    private void Progress()
    {
        Add("RunAll's progress, by transport", RunProgressEstimate.Describe("TcpClient2", 2, 3, [20_000, 50_000], 10, warmupRuns: 3,
            TimeSpan.FromSeconds(200), TimeSpan.FromSeconds(100)));
        Add("RunAll's progress, a peer", RunProgressEstimate.Describe("Peer: SQLite ATTACH", 0, 0, [1_000], 2, warmupRuns: 0, left: null, TimeSpan.Zero));
        Add("RunAll's progress, interleaved", RunProgressEstimate.DescribeRun("round 2 of 5", "3 of 7", "TcpClient2", 20_000,
            TimeSpan.FromSeconds(200), TimeSpan.FromSeconds(100)));
        Add("RunAll's progress, rows with a payload", RunProgressEstimate.DescribeRun("round 2 of 5", "3 of 7", "TcpClient2", 512,
            TimeSpan.FromSeconds(200), TimeSpan.FromSeconds(100), payloadBytes: 262_144));
        Add("Findings about the rows' size", string.Join("\n", PayloadTrend.Lines(ReportContent.Summarise(
        [
            .. new[] { ("TcpClient2", 1.0, 9.0), ("GrpcClient", 3.0, 4.0), ("PipelinedCopy", 0.5, 3.0) }.SelectMany(t => new[]
            {
                new Measurement { Transport = t.Item1, Records = 1000, ElapsedSeconds = t.Item2, Verified = true },
                new Measurement { Transport = t.Item1, Records = 1000, ElapsedSeconds = t.Item3, Verified = true, PayloadBytes = 1 << 20, PayloadKind = "Bytes" },
            }),
        ]))));
        Add("A client's progress", TransferProgress.Describe("TcpClient2", BatchPlan.Create(50, 1000), 12_000, TimeSpan.FromSeconds(4)));
        Add("A client's progress, nothing committed", TransferProgress.Describe("HttpRequest", BatchPlan.Create(2, 10), 0, TimeSpan.FromSeconds(5)));
        var jit = ReportContent.Summarise(
        [
            ResultsTests.Run("TcpClient2", 1000, 3.0, 0) with { Warmup = true, ClientJitSeconds = 0.9 },
            ResultsTests.Run("TcpClient2", 1000, 1.0, 1) with { ClientJitSeconds = 0.010 },
            ResultsTests.Run("TcpClient2", 1000, 1.0, 2) with { ClientJitSeconds = 0.4 },
        ]);
        Add("The JIT during the measured runs", NoiseReport.JitSentence(jit));
    }

    private void FaultOutcomes()
    {
        Measurement[] runs =
        [
            FaultTableTests.Run("TcpClient2", 1, 0.2) with { FaultInjected = false, FaultAfterBytes = 1_000_000, FaultBytesFromServer = 612_345 },
            FaultTableTests.Run("GrpcClient", 1, 0.3, reconnects: 1, recovery: 0.1) with { FaultInjected = true },
            FaultTableTests.Run("GrpcClient", 2, 0.2) with { FaultInjected = false, FaultAfterBytes = 1_000_000, FaultBytesFromServer = 999_999 },
        ];
        Add("The fault table", FaultTable.Markdown([.. FaultRuns.Rows(runs)]));
    }

    private void StopAtPrecision()
    {
        var steady = StopAtPrecisionTests.Rounds(("TcpClient2", [1.50, 1.51, 1.49, 1.50]));
        Add("StopAtPrecision reached", RatioPrecision.ReportLine(2, steady));
        Add("StopAtPrecision not reached", RatioPrecision.ReportLine(0.25, steady));
        Add("StopAtPrecision not judged", RatioPrecision.ReportLine(2, [.. steady.Select(m => m with { RoundSeed = null })]));
        Add("StopAtPrecision's widest, too few runs", RatioPrecision.Of(StopAtPrecisionTests.Rounds(("RestJson", [1.3, 1.4])))!.Describe());
        using var directory = new TempDirectory("it-messages-");
        foreach (var run in StopAtPrecisionTests.Rounds(("TcpClient2", [1.50, 1.51, 1.49, 1.52]), ("GrpcClient", [1.2, 1.5, 1.1, 1.4])))
            MeasurementLog.Append(Path.Combine(directory.Path, "runs.jsonl"), run);
        foreach (var (precision, minRounds) in new[] { ("2", 3), ("50", 3), ("2%", 3), ("2", 2) })
        {
            var (task, engine) = StopAtPrecisionTests.Check(directory, precision, round: 5, first: true, minRounds);
            task.Execute();
            Add($"CheckRoundsPrecision, StopAtPrecision={precision}, MinRounds={minRounds}", engine.Log);
        }
    }
}
