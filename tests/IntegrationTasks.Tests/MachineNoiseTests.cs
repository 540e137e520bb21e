namespace IntegrationTasks.Tests;

/// <summary>The machine's own noise (calibration loops) and the paired ratios of interleaved rounds.</summary>
[TestClass]
[TestCategory("Unit")]
public sealed class MachineNoiseTests
{
    private static NoiseReading Reading(string phase, string loop, params double[] chunks) => NoiseReading.Of(phase, loop, chunks);

    [TestMethod]
    public void A_quiet_machine_gives_no_warning_and_a_noisy_or_drifting_one_says_which_loop_and_how_much()
    {
        NoiseReading[] quiet =
        [
            Reading("Before", MachineNoise.Cpu, 10, 10.1, 9.9, 10), Reading("Before", MachineNoise.DatabaseLoop, 5, 5.05, 4.95, 5),
            Reading("After", MachineNoise.Cpu, 10.2, 10.1, 10.3, 10.2), Reading("After", MachineNoise.DatabaseLoop, 5.1, 5, 5.05, 5),
        ];
        Assert.IsEmpty(MachineNoise.Warnings(quiet));
        Assert.AreEqual(0.816, quiet[0].SpreadPercent, 0.001); // sd 0.0816 over a mean of 10

        NoiseReading[] noisy = [quiet[0], quiet[1], Reading("After", MachineNoise.Cpu, 10, 16, 10, 10), Reading("After", MachineNoise.DatabaseLoop, 6, 6, 6, 6)];
        var warnings = MachineNoise.Warnings(noisy);
        Assert.HasCount(3, warnings, string.Join("\n", warnings));
        Assert.AreEqual((MachineNoise.Cpu, "After", false, 5.0), (warnings[0].Loop, warnings[0].Phase, warnings[0].IsDrift, warnings[0].LimitPercent));
        Assert.AreEqual(26.1, warnings[0].Percent, 0.05); // sd 3 over a mean of 11.5
        Assert.AreEqual((MachineNoise.Cpu, true, 10.0), (warnings[1].Loop, warnings[1].IsDrift, warnings[1].LimitPercent));
        Assert.AreEqual(15, warnings[1].Percent, 0.5, "slower after");
        Assert.AreEqual((MachineNoise.DatabaseLoop, true, 10.0), (warnings[2].Loop, warnings[2].IsDrift, warnings[2].LimitPercent));
        Assert.AreEqual(20, warnings[2].Percent, 0.5);
        // RunAll warns once, with every reason.
        StringAssert.Contains(MachineNoise.BuildWarning(noisy), NoiseWarning.Describe(warnings));
        Assert.IsNull(MachineNoise.BuildWarning(quiet));
    }

    [TestMethod]
    public void PostgreSQLs_database_loop_is_judged_by_its_own_quiet_spread_and_not_by_its_drift()
    {
        // Found by #30's benchmark on PostgreSQL: with nothing else running its loop varied by 10–23 % and moved by 12–56 %.
        NoiseReading OnPostgres(string phase, params double[] chunks) => Reading(phase, MachineNoise.DatabaseLoop, chunks) with { Provider = "PostgreSql" };
        NoiseReading[] quiet = [OnPostgres("Before", 100, 130, 80, 110), OnPostgres("After", 70, 75, 60, 80)];
        Assert.AreEqual(19.8, quiet[0].SpreadPercent, 0.1);
        Assert.IsEmpty(MachineNoise.Warnings(quiet), "20 % within a reading and 36 % faster after: PostgreSQL's loop when quiet");
        var noisy = MachineNoise.Warnings([OnPostgres("Before", 100, 180, 60, 110), quiet[1]]);
        Assert.AreEqual((MachineNoise.DatabaseLoop, "Before", 25.0), (noisy.Single().Loop, noisy.Single().Phase, noisy.Single().LimitPercent));
        Assert.AreEqual(44.4, noisy.Single().Percent, 0.05);
        // The same readings on SQLite are judged at 15 % and for drift.
        Assert.HasCount(2, MachineNoise.Warnings([quiet[0] with { Provider = "Sqlite" }, quiet[1] with { Provider = "Sqlite" }]));
        StringAssert.Contains(NoiseReport.Markdown(quiet, [], diagnostics: true), "On PostgreSQL each lookup of the database loop");
        Assert.DoesNotContain("On PostgreSQL", NoiseReport.Markdown(quiet, []), "a diagnostic: only with NoiseDiagnostics");
    }

    [TestMethod]
    public void The_write_loop_is_judged_by_its_own_quiet_spread_and_drift_and_the_memory_loop_by_its_own()
    {
        // Measured on SQLite with nothing else running: 17–29 % within a reading, 6 % faster to 20 % slower after a RunAll.
        NoiseReading[] quiet = [Reading("Before", MachineNoise.WriteLoop, 20, 30, 25, 22), Reading("After", MachineNoise.WriteLoop, 24, 36, 30, 26)];
        Assert.IsEmpty(MachineNoise.Warnings(quiet), "19 % within a reading and 18 % slower after: the write loop when quiet");
        var slower = MachineNoise.Warnings([quiet[0], Reading("After", MachineNoise.WriteLoop, 32, 40, 36, 36)]);
        Assert.AreEqual((MachineNoise.WriteLoop, true, 30.0), (slower.Single().Loop, slower.Single().IsDrift, slower.Single().LimitPercent));
        Assert.AreEqual(48, slower.Single().Percent, 0.5);
        var noisy = MachineNoise.Warnings([Reading("Before", MachineNoise.WriteLoop, 10, 40, 10, 40), quiet[1]]);
        Assert.AreEqual((MachineNoise.WriteLoop, "Before", 40.0), (noisy.Single().Loop, noisy.Single().Phase, noisy.Single().LimitPercent));
        Assert.AreEqual(69.3, noisy.Single().Percent, 0.05);
        // On PostgreSQL (each commit waits for the server's WAL): 15–52 % when quiet, judged at 60 %.
        Assert.IsEmpty(MachineNoise.Warnings([.. new[] { Reading("Before", MachineNoise.WriteLoop, 20, 45, 20, 40), quiet[1] }.Select(r => r with { Provider = "PostgreSql" })]));
        // The memory loop: 2.4–6.1 % when quiet, judged at 10 %, its drift at 10 % like the CPU loop's.
        Assert.IsEmpty(MachineNoise.Warnings([Reading("Before", MachineNoise.Memory, 32, 34, 31, 33), Reading("After", MachineNoise.Memory, 33, 35, 32, 34)]));
        Assert.HasCount(2, MachineNoise.Warnings([Reading("Before", MachineNoise.Memory, 30, 40, 30, 40), Reading("After", MachineNoise.Memory, 40, 41, 40, 41)]));
    }

    [TestMethod]
    public void The_quiet_sentence_gives_each_loop_the_threshold_of_its_own_database()
    {
        // The server on PostgreSQL, the client on SQLite: the lookups judged at 25 %, the writes at SQLite's 40 %.
        NoiseReading[] readings =
        [
            Reading("Before", MachineNoise.Cpu, 10, 10.1, 9.9, 10), Reading("Before", MachineNoise.DatabaseLoop, 100, 110, 90, 100) with { Provider = "PostgreSql" },
            Reading("Before", MachineNoise.WriteLoop, 20, 22, 24, 22) with { Provider = "Sqlite" },
        ];
        Assert.IsEmpty(MachineNoise.Warnings(readings));
        CollectionAssert.AreEqual(new[] { 5.0, 25.0, 40.0 }, readings.Select(MachineNoise.NoisyPercentOf).ToArray(), "each loop at its database's threshold");
    }

    [TestMethod]
    public void The_memory_loop_warms_up_then_is_timed_in_at_least_ten_chunks()
    {
        var watch = System.Diagnostics.Stopwatch.StartNew();
        var reading = MachineNoise.MemoryLoop("After", TimeSpan.FromMilliseconds(50));
        Assert.IsGreaterThanOrEqualTo(10, reading.Chunks);
        // Untimed for WarmUp first: without it the readings before a RunAll spread more than those right after them (the JIT's tiers).
        Assert.IsGreaterThanOrEqualTo(MachineNoise.WarmUp.TotalMilliseconds, watch.Elapsed.TotalMilliseconds - reading.MeanMs * reading.Chunks);
        Assert.IsTrue(reading is { MeanMs: > 0, Loop: MachineNoise.Memory, Phase: "After" } && reading.MinMs <= reading.MeanMs && reading.MeanMs <= reading.MaxMs, reading.ToString());
    }

    [TestMethod]
    public void The_CPU_loop_warms_up_then_is_timed_in_at_least_ten_chunks()
    {
        var watch = System.Diagnostics.Stopwatch.StartNew();
        var reading = MachineNoise.CpuLoop("Before", TimeSpan.FromMilliseconds(50));
        Assert.IsGreaterThanOrEqualTo(10, reading.Chunks);
        // Untimed for WarmUp first: without it the readings before a RunAll spread more than those right after them (the JIT's tiers).
        Assert.IsGreaterThanOrEqualTo(MachineNoise.WarmUp.TotalMilliseconds, watch.Elapsed.TotalMilliseconds - reading.MeanMs * reading.Chunks);
        Assert.IsTrue(reading is { MeanMs: > 0, Loop: MachineNoise.Cpu, Phase: "Before" } && reading.MinMs <= reading.MeanMs && reading.MeanMs <= reading.MaxMs, reading.ToString());
    }

    [TestMethod]
    public async Task The_write_loop_commits_batches_in_a_scratch_table_on_the_clients_database_and_leaves_ClientTable_as_it_was()
    {
        await using var databases = TestDatabases.Sqlite();
        await databases.Client.EnsureSchemaAsync(CancellationToken.None);
        await using (var writer = await RecordWriter.OpenAsync(databases.Client, RecordTable.Client, CancellationToken.None))
            await writer.InsertBatchAsync([SampleData.Create(1), SampleData.Create(2)], CancellationToken.None);

        var reading = await MachineNoise.WriteLoopAsync("After", databases.Client, TimeSpan.FromMilliseconds(50), CancellationToken.None);

        Assert.IsGreaterThanOrEqualTo(10, reading.Chunks);
        Assert.IsTrue(reading is { Loop: MachineNoise.WriteLoop, Phase: "After", Provider: "Sqlite", MeanMs: > 0 }, reading.ToString());
        Assert.AreEqual(MachineNoise.NoisyWritePercent, MachineNoise.NoisyPercentOf(reading));
        Assert.AreEqual(2, await databases.Client.CountAsync(RecordTable.Client, CancellationToken.None), "the last run's rows stay");
        var gone = await Assert.ThrowsAsync<Microsoft.Data.Sqlite.SqliteException>(() => databases.Client.CountAsync(MachineNoise.ScratchTable, CancellationToken.None));
        StringAssert.Contains(gone.Message, "no such table");
        await Assert.ThrowsExactlyAsync<ArgumentException>(() => databases.Client.DropAsync(RecordTable.Client, CancellationToken.None));
    }

    [TestMethod]
    public void The_noise_section_sets_the_loops_beside_the_transports_spread_and_warns_when_noisy()
    {
        NoiseReading[] readings = [Reading("Before", MachineNoise.Cpu, 10, 10, 10, 13), Reading("After", MachineNoise.Cpu, 10, 10, 10, 10)];
        var rows = ReportContent.Summarise([Run("TcpClient2", 1.0, 1, 5), Run("TcpClient2", 1.2, 2, 5), Run("TcpClient2", 1.1, 3, 5)]);
        var markdown = NoiseReport.Markdown(readings, rows);
        var before = MarkdownTable.With(markdown, "Spread (std dev / mean, %)").RowsNamed(MachineNoise.Cpu)[0];
        Assert.AreEqual(("before the runs", "4", "10.75", "14.0"), (before["When"], before["Chunks"], before["Mean ms a chunk"], before["Spread (std dev / mean, %)"]));
        StringAssert.Contains(markdown, "The transports' runs varied by 9.1 %"); // sd 0.1 over 1.1
        StringAssert.Contains(markdown, $"**Warning ({ErrorCodes.MachineNoisy}): ");
        StringAssert.Contains(markdown, MachineNoise.Warnings(readings).Single().Describe());
        Assert.AreEqual("", NoiseReport.Markdown([], rows));

        // The write loop's chunks differ by where SQLite's checkpoints fall: its 25 % does not make the runs' 9 % the machine's.
        NoiseReading[] quietWithWrites = [Reading("Before", MachineNoise.Cpu, 10, 10.1, 9.9, 10), Reading("Before", MachineNoise.WriteLoop, 20, 30, 22, 31)];
        StringAssert.Contains(NoiseReport.Markdown(quietWithWrites, rows), "That is more than the loops' spread");
    }

    private static readonly DateTimeOffset RunAllStart = new(2026, 11, 25, 22, 0, 0, TimeSpan.Zero);

    /// <summary>A run that ended <paramref name="endedAt"/> seconds into the RunAll (by default: ten seconds a round, the transports in the round's first second).</summary>
    private static Measurement Run(string transport, double seconds, int repetition, int? seed, double? endedAt = null) => new()
    {
        Transport = transport, Records = 100_000, BatchSize = 1000, Repetition = repetition, ElapsedSeconds = seconds, Verified = true, RoundSeed = seed,
        Timestamp = RunAllStart.AddSeconds(endedAt ?? repetition * 10 + (transport == "PipelinedCopy" ? 3 : 6)),
    };

    [TestMethod]
    public void Paired_ratios_divide_each_round_by_the_reference_of_the_same_round_when_the_runs_were_interleaved()
    {
        // PipelinedCopy drifts from 1.0 to 2.0 s over the rounds and TcpClient2 with it, at 1.5× each time: the ratio of means says 1.5
        // too, but with an interval from the runs' spread; the paired ratio's interval is 0.
        Measurement[] runs =
        [
            Run("PipelinedCopy", 1.0, 1, 9), Run("PipelinedCopy", 1.5, 2, 9), Run("PipelinedCopy", 2.0, 3, 9),
            Run("TcpClient2", 1.5, 1, 9), Run("TcpClient2", 2.25, 2, 9), Run("TcpClient2", 3.0, 3, 9),
        ];
        var tcp = ReportContent.Summarise(runs).Single(r => r.Transport == "TcpClient2");
        Assert.AreEqual(1.5, tcp.PairedRatioToPipelined!.Mean, 1e-9);
        Assert.AreEqual(0, tcp.PairedRatioToPipelined.Ci95, 1e-9);
        Assert.AreEqual(1.5, tcp.RatioToPipelined!.Value, 1e-9);
        Assert.IsGreaterThan(0.5, tcp.Seconds.Ci95);
        var cell = MarkdownTable.With(ReportContent.Markdown(ReportContent.Summarise(runs), new Dictionary<string, string>()), "Paired × PipelinedCopy (±95% CI)").Row("TcpClient2");
        Assert.AreEqual("1.50 ±0.00", cell["Paired × PipelinedCopy (±95% CI)"]);
        // By transport (no seed), or runs of two RunAlls: no pairs.
        Assert.IsNull(ReportContent.Summarise([.. runs.Select(r => r with { RoundSeed = null })]).Single(r => r.Transport == "TcpClient2").PairedRatioToPipelined);
        Assert.IsNull(ReportContent.Summarise([.. runs.Select(r => r.Transport == "TcpClient2" ? r with { RoundSeed = 10 } : r)])
            .Single(r => r.Transport == "TcpClient2").PairedRatioToPipelined);
    }

    [TestMethod]
    public void A_run_is_paired_with_the_reference_run_nearest_to_it_in_time_not_the_one_of_its_round()
    {
        // Round 1 ends with TcpClient2 (60 s in) and round 2 starts with PipelinedCopy (62 s): those two met the same stretch of the
        // machine, not TcpClient2 and round 1's PipelinedCopy, 50 s earlier. Round 2's TcpClient2 (118 s) meets its own round's
        // reference (100 s) and, with ReferenceEvery, the extra one right before it (115 s) is nearer still.
        Measurement[] runs =
        [
            Run("PipelinedCopy", 1.0, 1, 9, endedAt: 10), Run("TcpClient2", 3.0, 1, 9, endedAt: 60),
            Run("PipelinedCopy", 2.0, 2, 9, endedAt: 62), Run("PipelinedCopy", 4.0, 2, 9, endedAt: 100), Run("PipelinedCopy", 2.5, 2, 9, endedAt: 115),
            Run("TcpClient2", 5.0, 2, 9, endedAt: 118),
        ];
        var tcp = ReportContent.Summarise(runs).Single(r => r.Transport == "TcpClient2");
        Assert.AreEqual((3.0 / 2.0 + 5.0 / 2.5) / 2, tcp.PairedRatioToPipelined!.Mean, 1e-9);
        Assert.AreEqual(2, tcp.PairedRatioToPipelined.Count);
        // The overhead pairs them alike: each run's time less its reference run's, per record, with the interval of those differences.
        var differences = Summary.Of([3.0 - 2.0, 5.0 - 2.5]);
        Assert.IsTrue(tcp.OverheadPaired);
        Assert.AreEqual(differences.Mean / 100_000 * 1e6, tcp.OverheadMicrosPerRecord!.Value, 1e-9);
        Assert.AreEqual(differences.Ci95 / 100_000 * 1e6, tcp.OverheadCi95Micros!.Value, 1e-9);
        // The reference's own figures take every run of it, the extra ones too.
        Assert.AreEqual(4, ReportContent.Summarise(runs).Single(r => r.Transport == "PipelinedCopy").Seconds.Count);
        // Equally near: the reference run of the same round.
        Measurement[] tie = [Run("PipelinedCopy", 1.0, 1, 9, endedAt: 10), Run("TcpClient2", 3.0, 2, 9, endedAt: 20), Run("PipelinedCopy", 1.5, 2, 9, endedAt: 28.25)];
        Assert.AreEqual(2.0, ReportContent.Summarise(tie).Single(r => r.Transport == "TcpClient2").PairedRatioToPipelined!.Mean, 1e-9);
    }

    /// <summary>Runs of <paramref name="transports"/> in interleaved rounds, one after the other in time, each slowed by what the machine did then.</summary>
    internal static List<Measurement> Rounds(string[] transports, int rounds, Func<int, double> slowdownAt, bool cpuSlowsToo)
    {
        var start = new DateTimeOffset(2026, 11, 25, 22, 0, 0, TimeSpan.Zero);
        var runs = new List<Measurement>();
        for (var round = 1; round <= rounds; round++)
            for (var t = 0; t < transports.Length; t++)
            {
                var slowdown = slowdownAt(runs.Count);
                var seconds = (1.0 + t) * slowdown;
                runs.Add(new Measurement
                {
                    Transport = transports[t], Records = 1000, ElapsedSeconds = seconds, Repetition = round, RoundSeed = 7, Verified = true,
                    ClientCpuSeconds = cpuSlowsToo ? 0.8 * seconds : 0.8 * (1.0 + t), Timestamp = start.AddSeconds(runs.Count * 2),
                });
            }
        return runs;
    }

    [TestMethod]
    public void The_order_of_the_runs_tells_whether_the_machine_slowed_in_spells_longer_than_a_run_and_whether_slow_runs_computed_more()
    {
        string[] transports = ["PipelinedCopy", "GrpcClient", "TcpClient2", "RestJson"];
        // The machine 20 % slower for four runs, then four at its speed: every run shares its neighbours' luck.
        var spells = NoiseReport.Spells.Of(Rounds(transports, 6, i => i / 4 % 2 == 0 ? 1.2 : 1.0, cpuSlowsToo: true))!;
        Assert.AreEqual(24, spells.Runs);
        Assert.IsGreaterThan(NoiseReport.SpellCorrelation, spells.NextRunCorrelation);
        Assert.IsGreaterThan(NoiseReport.CpuBoundCorrelation, spells.CpuCorrelation!.Value);
        var sentence = NoiseReport.SpellsSentence(spells);
        StringAssert.Contains(sentence, "(24 measured runs, 2.70 s a run, 6 s a round at the median)");
        StringAssert.Contains(sentence, "spells longer than a run");
        StringAssert.Contains(sentence, "slow runs also spent more CPU on the same work");

        // Every third run slow, the CPU the same: no spell outlasted a run, and the slow runs waited.
        var alternating = NoiseReport.Spells.Of(Rounds(transports, 6, i => i % 3 == 0 ? 1.2 : 1.0, cpuSlowsToo: false))!;
        Assert.IsLessThan(0.0, alternating.NextRunCorrelation);
        Assert.IsNull(alternating.CpuCorrelation, "the CPU did not vary at all");
        StringAssert.Contains(NoiseReport.SpellsSentence(alternating), "neighbouring runs did not share their luck");

        var warmups = Rounds(transports, 6, i => i / 4 % 2 == 0 ? 1.2 : 1.0, cpuSlowsToo: true).Select(r => r with { Warmup = true }).ToList();
        Assert.IsNull(NoiseReport.Spells.Of(warmups), "warm-ups say nothing");
        Assert.IsNull(NoiseReport.Spells.Of(Rounds(transports, 2, i => i / 4 % 2 == 0 ? 1.2 : 1.0, cpuSlowsToo: true)), "eight runs are too few");
        Assert.IsNull(NoiseReport.Spells.Of(Rounds(transports, 6, _ => 1.0, true).Select(r => r with { RoundSeed = null }).ToList()), "by transport, the order is not the machine's");
        Assert.AreEqual("", NoiseReport.SpellsSentence(null));
        var spelled = Rounds(transports, 6, i => i / 4 % 2 == 0 ? 1.2 : 1.0, cpuSlowsToo: true);
        StringAssert.Contains(NoiseReport.Markdown([NoiseReading.Of("Before", MachineNoise.Cpu, [1.0, 1.0])], [], spelled, diagnostics: true), "In the order they ran (24 measured runs");
        Assert.DoesNotContain("In the order they ran", NoiseReport.Markdown([NoiseReading.Of("Before", MachineNoise.Cpu, [1.0, 1.0])], [], spelled));
    }

    [TestMethod]
    public void The_hypervisors_steal_during_the_runs_is_set_beside_their_deviations()
    {
        string[] transports = ["PipelinedCopy", "GrpcClient", "TcpClient2", "RestJson"];
        // The slow runs are the ones the hypervisor took 0.2 s a second from (over both CPUs); the others met none.
        var taken = Rounds(transports, 6, i => i / 4 % 2 == 0 ? 1.2 : 1.0, cpuSlowsToo: false)
            .Select(r => r with { HostStealSeconds = r.ElapsedSeconds / (1.0 + Array.IndexOf(transports, r.Transport)) > 1.1 ? 0.2 * r.ElapsedSeconds : 0 }).ToList();
        var steal = NoiseReport.Spells.Of(taken)!.Steal!;
        Assert.AreEqual(taken.Sum(r => r.HostStealSeconds!.Value) / taken.Sum(r => r.ElapsedSeconds), steal.PerSecond, 1e-9);
        Assert.AreEqual(0.2, steal.MostPerSecond, 1e-9);
        Assert.AreEqual(1.0, steal.Correlation!.Value, 1e-9);
        var stealSentence = NoiseReport.SpellsSentence(NoiseReport.Spells.Of(taken));
        StringAssert.Contains(stealSentence, "The hypervisor's steal");
        StringAssert.Contains(stealSentence, "200 in the run that met the most");
        StringAssert.Contains(stealSentence, "by r = 1.00: part of the slow runs' time");
        // A steady trickle that has nothing to do with which runs were slow.
        var trickle = taken.Select((r, i) => r with { HostStealSeconds = (i % 2 == 0 ? 0.001 : 0.002) * r.ElapsedSeconds }).ToList();
        StringAssert.Contains(NoiseReport.SpellsSentence(NoiseReport.Spells.Of(trickle)), ": the slow runs were not the CPU taken away.");
        // Where a run has none recorded (not Linux, or a log from before), nothing is said of it.
        Assert.IsNull(NoiseReport.Spells.Of([.. taken.Select((r, i) => i == 3 ? r with { HostStealSeconds = null } : r)])!.Steal);
        Assert.IsFalse(NoiseReport.SpellsSentence(NoiseReport.Spells.Of(Rounds(transports, 6, i => i / 4 % 2 == 0 ? 1.2 : 1.0, true))).Contains("steal", StringComparison.Ordinal));
    }

    [TestMethod]
    public void Steal_is_the_eighth_figure_of_proc_stats_cpu_line_in_hundredths_of_a_second()
    {
        Assert.AreEqual(373.24, MachineCpu.ParseSteal("cpu  922751 156 227721 2535764 8051 0 6867 37324 0 0")!.Value, 1e-9);
        Assert.IsNull(MachineCpu.ParseSteal("cpu0 432347 90 109199 1303957 2136 0 2563 18641 0 0"), "a CPU's line, not the machine's");
        Assert.IsNull(MachineCpu.ParseSteal("cpu  1 2 3 4 5 6 7"), "no steal field");
        Assert.IsNull(MachineCpu.ParseSteal(null));
        Assert.IsNull(MachineCpu.StealSeconds(Path.Combine(Path.GetTempPath(), "no-such-dir-it", "stat")));
        // Here (Linux) it reads, and never goes back.
        var first = MachineCpu.StealSeconds();
        Assert.IsNotNull(first);
        Assert.IsGreaterThanOrEqualTo(first.Value, MachineCpu.StealSeconds()!.Value);
    }
}
