namespace IntegrationTasks.Tests;

/// <summary>StopAtPrecision: an interleaved RunAll's rounds stop once every paired ratio to the reference is known precisely enough.</summary>
[TestClass]
[TestCategory("EndToEnd")]
public sealed class StopAtPrecisionTests
{
    private static readonly DateTimeOffset Start = new(2026, 11, 26, 9, 0, 0, TimeSpan.Zero);

    /// <summary>Rounds of PipelinedCopy then each transport, one second apart; a transport's seconds per round as given.</summary>
    internal static List<Measurement> Rounds(params (string Transport, double[] Seconds)[] transports)
    {
        var runs = new List<Measurement>();
        var rounds = transports.Max(t => t.Seconds.Length);
        for (var round = 1; round <= rounds; round++)
        {
            runs.Add(Run("PipelinedCopy", 1.0, round, runs.Count));
            foreach (var (transport, seconds) in transports.Where(t => t.Seconds.Length >= round))
                runs.Add(Run(transport, seconds[round - 1], round, runs.Count));
        }
        return runs;

        static Measurement Run(string transport, double seconds, int round, int ordinal) => new()
        {
            Transport = transport, Records = 100_000, BatchSize = 1000, Repetition = round, ElapsedSeconds = seconds, ServerWork = "PerRecord",
            Verified = true, RoundSeed = 5, Timestamp = Start.AddSeconds(10 * ordinal + seconds),
        };
    }

    [TestMethod]
    [TestCategory("Unit")]
    public void The_widest_is_the_paired_ratio_known_least_precisely_and_one_without_an_interval_yet_is_widest_of_all()
    {
        var steady = new[] { 1.50, 1.51, 1.49, 1.50 };
        var shaky = new[] { 1.2, 1.5, 1.1, 1.4 };
        var widest = RatioPrecision.Of(Rounds(("TcpClient2", steady), ("GrpcClient", shaky)))!;
        var expected = Summary.Of(shaky);
        Assert.AreEqual(("GrpcClient", 100_000, 4), (widest.Transport, widest.Records, widest.Runs));
        Assert.AreEqual(expected.Mean, widest.Ratio, 1e-12, "PipelinedCopy took 1 s in every round, so each ratio is the transport's seconds");
        Assert.AreEqual(expected.Ci95 / expected.Mean * 100, widest.HalfWidthPercent, 1e-9);

        var young = RatioPrecision.Of(Rounds(("TcpClient2", steady), ("RestJson", [1.3, 1.3])))!;
        Assert.AreEqual(("RestJson", double.PositiveInfinity), (young.Transport, young.HalfWidthPercent));
        Assert.AreEqual(2, young.Runs);

        // Not interleaved (no round seed): nothing is paired, so nothing to judge; a failed run is not counted.
        Assert.IsNull(RatioPrecision.Of(Rounds(("TcpClient2", steady)).Select(m => m with { RoundSeed = null })));
        var failed = Rounds(("TcpClient2", steady), ("GrpcClient", shaky)).Select(m => m.Transport == "GrpcClient" ? m with { FailedWith = "IT3006" } : m);
        Assert.AreEqual("TcpClient2", RatioPrecision.Of(failed)!.Transport);
    }

    [TestMethod]
    [TestCategory("Unit")]
    public void The_report_says_what_was_asked_whether_the_rounds_reached_it_and_the_widest_ratio()
    {
        var runs = Rounds(("TcpClient2", [1.50, 1.51, 1.49, 1.50]));
        var halfWidth = RatioPrecision.Of(runs)!.HalfWidthPercent;
        // The wording is in Snapshots/messages.txt.snap; here, the figures each line carries.
        var reached = RatioPrecision.ReportLine(2, runs);
        StringAssert.Contains(reached, "reached after 4 rounds");
        StringAssert.Contains(reached, $"TcpClient2 at 100,000 records, 1.500 ±{halfWidth:F1} %");
        var needed = RatioPrecision.RoundsNeeded(RatioPrecision.Of(runs)!, 0.25)!.Value;
        var notReached = RatioPrecision.ReportLine(0.25, runs);
        StringAssert.Contains(notReached, "not reached in 4 rounds");
        StringAssert.Contains(notReached, $"about {needed:N0} rounds");
        StringAssert.Contains(RatioPrecision.ReportLine(2, [.. runs.Select(m => m with { RoundSeed = null })]), "not judged (4 rounds)");
    }

    [TestMethod]
    [TestCategory("Unit")]
    public void The_rounds_needed_are_the_fewest_whose_interval_at_the_scatter_so_far_is_within_the_precision()
    {
        double[] shaky = [1.2, 1.5, 1.1, 1.4];
        var widest = RatioPrecision.Of(Rounds(("TcpClient2", shaky)))!;
        var scatter = Summary.Of(shaky).StdDev / Summary.Of(shaky).Mean * 100;
        double HalfWidth(int rounds) => StudentT.Quantile(0.975, rounds - 1) * scatter / Math.Sqrt(rounds);
        foreach (var precision in new[] { 10.0, 2.0, 0.5 })
        {
            var needed = RatioPrecision.RoundsNeeded(widest, precision)!.Value;
            Assert.IsLessThanOrEqualTo(precision, HalfWidth(needed), $"±{precision} %: {needed} rounds");
            Assert.IsGreaterThan(precision, HalfWidth(needed - 1), $"±{precision} %: {needed - 1} rounds are not enough");
        }
        // Already there: the rounds run so far; no interval yet: no estimate.
        Assert.AreEqual(4, RatioPrecision.RoundsNeeded(widest, widest.HalfWidthPercent + 1e-9));
        Assert.IsNull(RatioPrecision.RoundsNeeded(RatioPrecision.Of(Rounds(("RestJson", [1.3, 1.4])))!, 2));
        Assert.AreEqual("", RatioPrecision.RoundsNeededText(RatioPrecision.Of(Rounds(("RestJson", [1.3, 1.4])))!, 2));
    }

    /// <summary>Each check a task of <paramref name="build"/> (the runs' project instances share the build's state), with a log of its own.</summary>
    internal static (CheckRoundsPrecision Task, FakeBuildEngine Engine) Check(TempDirectory directory, string precision, int round, bool first, int minRounds = 3,
        FakeBuildEngine? build = null)
    {
        var engine = build is null ? new FakeBuildEngine() : new FakeBuildEngine(build);
        return (new CheckRoundsPrecision
        {
            BuildEngine = engine, ResultsFile = Path.Combine(directory.Path, "runs.jsonl"),
            PrecisionPercent = precision, Round = round, FirstOfRound = first, MinRounds = minRounds, MaxRounds = 30,
        }, engine);
    }

    [TestMethod]
    [TestCategory("Unit")]
    public void The_rounds_are_judged_at_the_first_run_of_a_round_after_MinRounds_and_once_precise_enough_every_later_run_is_skipped()
    {
        using var directory = new TempDirectory("it-precision-");
        var build = new FakeBuildEngine();
        int? Decision() => RunState.For(build, Path.Combine(directory.Path, "runs.jsonl")).StoppedAfterRound;
        foreach (var run in Rounds(("TcpClient2", [1.50, 1.51, 1.49, 1.52]), ("GrpcClient", [1.2, 1.5, 1.1, 1.4])))
            MeasurementLog.Append(Path.Combine(directory.Path, "runs.jsonl"), run);

        // Before MinRounds rounds are done, and at any run but a round's first, nothing is judged, however loose the precision.
        foreach (var (round, first) in new[] { (1, true), (3, true), (4, false), (5, false) })
        {
            var (early, _) = Check(directory, "1000", round, first, build: build);
            Assert.IsTrue(early.Execute());
            Assert.IsFalse(early.Skip, $"round {round}");
        }
        Assert.IsNull(Decision());

        // Too wide: the next round runs, and the log says which ratio holds it back.
        var (strict, strictLog) = Check(directory, "2", round: 5, first: true, build: build);
        Assert.IsTrue(strict.Execute(), strictLog.Log);
        Assert.IsFalse(strict.Skip);
        Assert.IsNull(Decision());
        StringAssert.Contains(strictLog.Log, "after round 4 the widest paired ratio is GrpcClient");
        StringAssert.Contains(strictLog.Log, "GrpcClient at 100,000 records, 1.300 ±");
        StringAssert.Contains(strictLog.Log, "round 5 runs");
        StringAssert.Contains(strictLog.Log, "(Repetitions allows 30)");

        // Precise enough: this run and every later one is skipped; a run of a round before the stop (none is left) would not be.
        var (loose, looseLog) = Check(directory, "50", round: 5, first: true, build: build);
        Assert.IsTrue(loose.Execute(), looseLog.Log);
        Assert.IsTrue(loose.Skip);
        Assert.AreEqual(4, Decision());
        Assert.AreEqual(1, Directory.GetFiles(directory.Path).Length, "the decision is in memory: nothing beside the runs");
        StringAssert.Contains(looseLog.Log, "after round 4 every paired ratio");
        StringAssert.Contains(looseLog.Log, "within ±50 %");
        StringAssert.Contains(looseLog.Log, "GrpcClient at 100,000 records, 1.300 ±");
        foreach (var (round, first, skipped) in new[] { (5, false, true), (6, true, true), (4, false, false) })
        {
            var (later, _) = Check(directory, "2", round, first, build: build);
            Assert.IsTrue(later.Execute());
            Assert.AreEqual(skipped, later.Skip, $"round {round}");
        }
    }

    [TestMethod]
    [TestCategory("Unit")]
    public void A_precision_that_is_not_a_positive_percentage_or_too_few_MinRounds_is_a_coded_error()
    {
        using var directory = new TempDirectory("it-precision-");
        foreach (var bad in new[] { "2%", "0", "-1", "two", "" })
        {
            var (task, engine) = Check(directory, bad, round: 0, first: false);
            Assert.IsFalse(task.Execute(), bad);
            Assert.IsTrue(engine.HasErrorCode(ErrorCodes.InvalidParameter), engine.Log);
            StringAssert.Contains(engine.Log, $"StopAtPrecision must be a percentage above 0");
            StringAssert.Contains(engine.Log, $"(was '{bad}')");
        }
        var (few, fewLog) = Check(directory, "2", round: 0, first: false, minRounds: 2);
        Assert.IsFalse(few.Execute());
        Assert.IsTrue(fewLog.HasErrorCode(ErrorCodes.InvalidParameter), fewLog.Log);
        StringAssert.Contains(fewLog.Log, "MinRounds must be at least 3");
        StringAssert.Contains(fewLog.Log, "was 2.");
    }

    [TestMethod]
    public void RunAll_with_StopAtPrecision_stops_after_the_round_that_reaches_it_and_reports_so()
    {
        // A precision every interval meets: the rounds stop after MinRounds, whatever the machine did.
        using var artifacts = new TempDirectory("it-precision-");
        var (exitCode, output) = SmallRunAll.Run(artifacts, "-p:StopAtPrecision=100000", "-p:MinRounds=3", "-p:Repetitions=6");
        Assert.AreEqual(0, exitCode, output);
        StringAssert.Contains(output, "RunAll: StopAtPrecision=100000: after round 3");
        StringAssert.Contains(output, "RunAll: after round 3 every paired ratio");
        StringAssert.Contains(output, "is within ±100000 %");
        Assert.DoesNotContain("RunAll round 4 of 6", output);
        var runs = MeasurementLog.Read(Path.Combine(artifacts, "results", "runs.jsonl"));
        Assert.IsTrue(runs.All(r => r.Verified), string.Join("\n", runs));
        CollectionAssert.AreEquivalent(new[] { 1, 2, 3, 1, 2, 3 }, runs.Where(r => !r.Warmup).Select(r => r.Repetition).ToArray());
        var stopLine = ResultsJson.Load(Path.Combine(artifacts, "results")).Environment["StopAtPrecision"];
        StringAssert.Contains(stopLine, "±100000 %");
        StringAssert.Contains(stopLine, "reached after 3 rounds");
        StringAssert.Contains(stopLine, "(the widest: TcpClient2 at 2,000 records, ");
        StringAssert.Contains(output, $"StopAtPrecision: {stopLine}");
        HostingTests.AssertEndedCleanly(artifacts);

        // Only with interleaved rounds, and its value checked before any run.
        (exitCode, output) = HostingTests.RunBuild("RunAll", artifacts, "-p:StopAtPrecision=2", "-p:RepetitionOrder=ByTransport", "-p:Transports=PipelinedCopy", "-p:RecordCounts=2000");
        Assert.AreNotEqual(0, exitCode);
        StringAssert.Contains(output, "error IT1001: StopAtPrecision needs interleaved rounds");
        StringAssert.Contains(output, "was RepetitionOrder=ByTransport.");
        (exitCode, output) = HostingTests.RunBuild("RunAll", artifacts, "-p:StopAtPrecision=2%25", "-p:Transports=PipelinedCopy", "-p:RecordCounts=2000");
        Assert.AreNotEqual(0, exitCode);
        StringAssert.Contains(output, "error IT1001: StopAtPrecision must be a percentage");
        StringAssert.Contains(output, "(was '2%')");
        Assert.DoesNotContain("RunAll warm-ups, run 1", output);
    }
}
