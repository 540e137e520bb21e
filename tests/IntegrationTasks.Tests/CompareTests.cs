namespace IntegrationTasks.Tests;

[TestClass]
[TestCategory("Unit")]
public sealed class CompareTests
{
    private static string ResultsFile(string folder, string cpu, double tcpSeconds, double spread)
    {
        var measurements = new List<Measurement>();
        for (var repetition = 1; repetition <= 5; repetition++)
        {
            var jitter = (repetition - 3) * spread;
            measurements.Add(new Measurement { Transport = "DirectCopy", Records = 1000, Repetition = repetition, ElapsedSeconds = 1.0 + jitter, Verified = true });
            measurements.Add(new Measurement { Transport = "TcpClient2", Records = 1000, Repetition = repetition, ElapsedSeconds = tcpSeconds + jitter, Verified = true });
        }
        Directory.CreateDirectory(folder);
        IntegrationTasks.Exporters.ReportFiles.Write(folder, measurements, new Dictionary<string, string> { ["CPU"] = cpu, ["Data set"] = "sha256:abc over 1,000 rows" });
        return Path.Combine(folder, "results.json");
    }

    private readonly TempDirectory _root = new("it-compare-");

    [TestCleanup]
    public void RemoveResults() => _root.Dispose();

    private (string Before, string After) TwoRuns(double after, string cpuAfter = "same CPU") =>
        (ResultsFile(Path.Combine(_root, "before"), "same CPU", 1.0, 0.01), ResultsFile(Path.Combine(_root, "after"), cpuAfter, after, 0.01));

    private string WithReference(string name, double pipelined, double tcp)
    {
        var folder = Path.Combine(_root, name);
        Directory.CreateDirectory(folder);
        var measurements = Enumerable.Range(1, 5).SelectMany(r => new[]
        {
            new Measurement { Transport = "PipelinedCopy", Records = 1000, Repetition = r, ElapsedSeconds = pipelined + r * 0.001, Verified = true },
            new Measurement { Transport = "TcpClient2", Records = 1000, Repetition = r, ElapsedSeconds = tcp + r * 0.001, Verified = true },
        }).ToList();
        IntegrationTasks.Exporters.ReportFiles.Write(folder, measurements, new Dictionary<string, string>());
        return Path.Combine(folder, "results.json");
    }

    [TestMethod]
    public void The_comparison_shows_how_far_each_ratio_to_the_reference_moved()
    {
        // The whole machine 10 % slower the second time: the times moved, TcpClient2's ratio to PipelinedCopy did not.
        var engine = new FakeBuildEngine();
        Assert.IsTrue(new CompareResults { BuildEngine = engine, Baseline = WithReference("a", 1.0, 1.2), Current = WithReference("b", 1.1, 1.32), ThresholdPercent = 50 }
            .Execute(), engine.Log);
        var tcp = MarkdownTable.With(engine.Log, "Ratio change").Row("TcpClient2");
        Assert.AreEqual(("1.199", "1.199", "+0.0%"), (tcp["× PipelinedCopy before"], tcp["× PipelinedCopy after"], tcp["Ratio change"]));
        Assert.AreEqual("–", MarkdownTable.With(engine.Log, "Ratio change").Row("PipelinedCopy")["Ratio change"]);
        // Here TcpClient2 alone got slower: its ratio moved by 8.3 %.
        engine = new FakeBuildEngine();
        Assert.IsTrue(new CompareResults { BuildEngine = engine, Baseline = WithReference("c", 1.0, 1.2), Current = WithReference("d", 1.0, 1.3), ThresholdPercent = 50 }
            .Execute(), engine.Log);
        Assert.AreEqual("+8.3%", MarkdownTable.With(engine.Log, "Ratio change").Row("TcpClient2")["Ratio change"]);
        StringAssert.Contains(engine.Log, "moved by 8.3 % (median) and at most 8.3 % (TcpClient2)");
        StringAssert.Contains(engine.Log, "0 of 1 by less than 5 %");
    }

    [TestMethod]
    public void Two_runs_kept_elsewhere_are_compared_into_a_results_folder_not_made_yet()
    {
        // -t:Compare -p:Baseline=… -p:Current=… from a fresh ArtifactsDir failed with IT9999: compare.md's folder did not exist.
        var engine = new FakeBuildEngine();
        var output = Path.Combine(_root, "fresh-artifacts", "results", "compare.md");
        Assert.IsTrue(new CompareResults { BuildEngine = engine, Baseline = WithReference("e", 1.0, 1.2), Current = WithReference("f", 1.0, 1.2), OutputFile = output }
            .Execute(), engine.Log);
        Assert.AreEqual("+0.0%", MarkdownTable.With(File.ReadAllText(output), "Ratio change").Row("TcpClient2")["Ratio change"]);
    }

    /// <summary>
    /// Five interleaved rounds, ten seconds apart, PipelinedCopy first in each: each transport's time is its ratio × PipelinedCopy's of
    /// that round, scattered by its Scatter.
    /// </summary>
    private string Interleaved(string name, params (string Transport, double Ratio, double Scatter)[] transports)
    {
        var folder = Path.Combine(_root, name);
        Directory.CreateDirectory(folder);
        var start = new DateTimeOffset(2026, 11, 25, 22, 0, 0, TimeSpan.Zero);
        var measurements = Enumerable.Range(1, 5).SelectMany(r => transports.Select((t, i) => new Measurement
        {
            Transport = t.Transport, Records = 1000, Repetition = r, ElapsedSeconds = (1.0 + r * 0.05) * (t.Ratio + (r % 2 == 0 ? t.Scatter : -t.Scatter)),
            Verified = true, RoundSeed = 7, Timestamp = start.AddSeconds(r * 10 + 2 * (i + 1)),
        }).Prepend(new Measurement
        {
            Transport = "PipelinedCopy", Records = 1000, Repetition = r, ElapsedSeconds = 1.0 + r * 0.05, Verified = true, RoundSeed = 7, Timestamp = start.AddSeconds(r * 10),
        })).ToList();
        IntegrationTasks.Exporters.ReportFiles.Write(folder, measurements, new Dictionary<string, string>());
        return Path.Combine(folder, "results.json");
    }

    [TestMethod]
    public void A_paired_ratio_that_moved_by_more_than_its_rounds_scatter_is_told_from_one_that_did_not()
    {
        // TcpClient2's rounds scatter by ±0.1 around 1.2 and 1.27 (+6 %, within its scatter); GrpcClient's by ±0.005 around 1.1 and 1.15 (+4.5 %, beyond it).
        var engine = new FakeBuildEngine();
        Assert.IsTrue(new CompareResults
        {
            BuildEngine = engine, ThresholdPercent = 50, NoiseDiagnostics = true,
            Baseline = Interleaved("e", ("TcpClient2", 1.2, 0.1), ("GrpcClient", 1.1, 0.005)),
            Current = Interleaved("f", ("TcpClient2", 1.27, 0.1), ("GrpcClient", 1.15, 0.005)),
        }.Execute(), engine.Log);
        var table = MarkdownTable.With(engine.Log, "Ratio moved beyond its rounds' scatter");
        StringAssert.StartsWith(table.Row("TcpClient2")["Ratio moved beyond its rounds' scatter"], "no (p=");
        StringAssert.StartsWith(table.Row("GrpcClient")["Ratio moved beyond its rounds' scatter"], "yes (p=");
        Assert.AreEqual("–", table.Row("PipelinedCopy")["Ratio moved beyond its rounds' scatter"]);
        StringAssert.Contains(engine.Log, "(Welch, p < 0.05): 1 of 2 paired ratios moved (GrpcClient)");
        // TcpClient2's paired ratio scatters by 9.0 % of its mean, GrpcClient's by 0.49 %: by chance alone, 5 rounds put both within
        // 5 % of the other run 59 % of the time, 27 rounds 19 times in 20 (computed apart, by integrating Student's t density).
        var chance = engine.Log[engine.Log.IndexOf("By chance alone", StringComparison.Ordinal)..].Split('\n')[0];
        StringAssert.Contains(chance, "median 4.8 %");
        StringAssert.Contains(chance, "two runs of 5 rounds each");
        StringAssert.Contains(chance, "within 5 % of each other 59 % of the time");
        StringAssert.Contains(chance, "about 27 rounds each");
    }

    [TestMethod]
    public void The_chance_that_two_runs_ratios_agree_by_chance_alone_is_the_product_over_the_ratios()
    {
        // One ratio scattering by 10 % of its mean, 5 rounds a run: P(|T| < 0.05 / (0.1·√(2/5))) with 8 degrees of freedom,
        // 0.5480 by integrating the density apart.
        Assert.AreEqual(0.5480, RatioAgreement.Chance([0.10], 5), 0.0005);
        Assert.AreEqual(RatioAgreement.Chance([0.10], 5) * RatioAgreement.Chance([0.03], 5), RatioAgreement.Chance([0.10, 0.03], 5), 1e-12);
        Assert.IsTrue(RatioAgreement.Chance([0.10], 30) > RatioAgreement.Chance([0.10], 10), "more rounds, likelier");
        Assert.IsTrue(RatioAgreement.Chance([0.10], 5, withinPercent: 10) > RatioAgreement.Chance([0.10], 5), "a wider margin, likelier");
        Assert.IsTrue(double.IsNaN(RatioAgreement.Chance([0.10], 1)), "one round has no scatter to go by");
        // The fewest rounds that make it 19 times in 20, for 25 ratios as scattered as on this machine (9 %): one fewer does not.
        var scatters = Enumerable.Repeat(0.09, 25).ToList();
        var rounds = RatioAgreement.RoundsFor(scatters)!.Value;
        Assert.IsTrue(RatioAgreement.Chance(scatters, rounds) >= 0.95 && RatioAgreement.Chance(scatters, rounds - 1) < 0.95, $"{rounds}");
        Assert.IsTrue(rounds is > 50 and < 200, $"{rounds}");
        Assert.AreEqual(2, RatioAgreement.RoundsFor([0.001]), "a quiet machine needs no more than two");
    }

    [TestMethod]
    public void A_significant_slowdown_beyond_the_threshold_fails_with_IT5003()
    {
        var (before, after) = TwoRuns(after: 1.3);
        var engine = new FakeBuildEngine();
        var compare = new CompareResults { BuildEngine = engine, Baseline = before, Current = after, Transports = ["TcpClient2"], ThresholdPercent = 10 };
        Assert.IsFalse(compare.Execute());
        Assert.AreEqual(1, compare.Regressions);
        Assert.IsTrue(engine.HasErrorCode(ErrorCodes.Regression), engine.Log);
        StringAssert.Contains(engine.Log, "TcpClient2 at 1,000 records regressed 30.0%");
        var direct = MarkdownTable.With(engine.Log, "Verdict").Row("DirectCopy");
        Assert.AreEqual(("1000", "1.000 ±0.020", "1.000 ±0.020", "+0.0%", "1", "no significant change"),
            (direct["records"], direct["Before (s)"], direct["After (s)"], direct["Change"], direct["p"], direct["Verdict"]));
    }

    [TestMethod]
    public void A_change_that_rounds_to_zero_reads_plus_zero_whichever_side_it_fell()
    {
        // Seen in tmux: the peer's 0.247 s → 0.247 s (a hair faster) read "-+0.0%".
        var (before, after) = TwoRuns(after: 0.99999);
        var engine = new FakeBuildEngine();
        Assert.IsTrue(new CompareResults { BuildEngine = engine, Baseline = before, Current = after, ThresholdPercent = 10 }.Execute(), engine.Log);
        Assert.AreEqual("+0.0%", MarkdownTable.With(engine.Log, "Verdict").Row("TcpClient2")["Change"]);
    }

    [TestMethod]
    public void Within_the_threshold_or_for_another_transport_the_gate_passes()
    {
        var (before, after) = TwoRuns(after: 1.3);
        var engine = new FakeBuildEngine();
        Assert.IsTrue(new CompareResults { BuildEngine = engine, Baseline = before, Current = after, ThresholdPercent = 50 }.Execute(), engine.Log);
        Assert.IsTrue(new CompareResults { BuildEngine = engine, Baseline = before, Current = after, Transports = ["DirectCopy"] }.Execute(), engine.Log);
    }

    [TestMethod]
    public void A_difference_within_the_noise_is_not_a_regression()
    {
        using var root = new TempDirectory("it-compare-");
        var before = ResultsFile(Path.Combine(root, "b"), "cpu", 1.0, 0.3);
        var after = ResultsFile(Path.Combine(root, "a"), "cpu", 1.2, 0.3); // +20%, but runs spread ±0.6 s
        var engine = new FakeBuildEngine();
        Assert.IsTrue(new CompareResults { BuildEngine = engine, Baseline = before, Current = after, ThresholdPercent = 10 }.Execute(), engine.Log);
        var tcp = MarkdownTable.With(engine.Log, "Verdict").Row("TcpClient2");
        Assert.AreEqual(("1.000 ±0.589", "1.200 ±0.589", "+20.0%", "no significant change"), (tcp["Before (s)"], tcp["After (s)"], tcp["Change"], tcp["Verdict"]));
    }

    [TestMethod]
    public void Runs_under_different_conditions_are_flagged()
    {
        var (before, after) = TwoRuns(after: 1.0, cpuAfter: "another CPU");
        var engine = new FakeBuildEngine();
        Assert.IsTrue(new CompareResults { BuildEngine = engine, Baseline = before, Current = after }.Execute(), engine.Log);
        Assert.IsTrue(engine.Warnings.Any(w => w.Code == ErrorCodes.ResultsNotComparable && w.Message!.Contains("CPU: same CPU → another CPU")), engine.Log);
    }

    [TestMethod]
    public void The_Compare_target_exits_non_zero_on_a_regression()
    {
        var (before, after) = TwoRuns(after: 1.5);
        var (exitCode, stdout, _) = RepositoryPaths.Run("dotnet", TestBuild.Arguments("Compare", null, $"-p:Baseline={before}", $"-p:Current={after}",
            "-p:CompareTransports=TcpClient2", $"-p:ResultsDir={Path.GetDirectoryName(after)}/"));
        Assert.AreNotEqual(0, exitCode, stdout);
        StringAssert.Contains(stdout, "error IT5003");
        Assert.IsTrue(File.Exists(Path.Combine(Path.GetDirectoryName(after)!, "compare.md")));

        var (ok, output, _) = RepositoryPaths.Run("dotnet", TestBuild.Arguments("Compare", null, $"-p:Baseline={before}", $"-p:Current={before}",
            $"-p:ResultsDir={Path.GetDirectoryName(after)}/"));
        Assert.AreEqual(0, ok, output);
    }

    [TestMethod]
    public void A_gated_transport_missing_from_either_run_fails_with_IT5005_and_an_unknown_one_with_IT1001()
    {
        // The walk-through: -p:CompareTransports=TcpClient2 passed although TcpClient2 was not in the current run; a misspelling passed too.
        var (before, after) = TwoRuns(after: 1.0);
        var engine = new FakeBuildEngine();
        var compare = new CompareResults
        {
            BuildEngine = engine, Baseline = before, Current = after, Transports = ["GrpcClient"], KnownTransports = ["DirectCopy", "TcpClient2", "GrpcClient"],
        };
        Assert.IsFalse(compare.Execute());
        Assert.IsTrue(engine.HasErrorCode(ErrorCodes.ComparedTransportMissing), engine.Log);
        StringAssert.Contains(engine.Log, "CompareTransports names GrpcClient, not measured in");

        engine = new FakeBuildEngine();
        compare = new CompareResults
        {
            BuildEngine = engine, Baseline = before, Current = after, Transports = ["TcpClinet2"], KnownTransports = ["DirectCopy", "TcpClient2", "GrpcClient"],
        };
        Assert.IsFalse(compare.Execute());
        Assert.IsTrue(engine.HasErrorCode(ErrorCodes.InvalidParameter), engine.Log);
        StringAssert.Contains(engine.Log, "Unknown transport(s) in CompareTransports: TcpClinet2.");
    }
}
