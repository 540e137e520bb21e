namespace IntegrationTasks.Tests;

/// <summary>Statistics that say when they mean little: below three runs no interval, no "best", nothing called different.</summary>
[TestClass]
[TestCategory("Unit")]
public sealed class FewRunsTests
{
    private static IEnumerable<Measurement> Runs(string transport, int batchSize, params double[] seconds) =>
        seconds.Select((s, i) => new Measurement
        {
            Transport = transport, Records = 20_000, BatchSize = batchSize, Repetition = i + 1, ElapsedSeconds = s, Verified = true,
        });

    [TestMethod]
    public void One_run_has_no_interval_to_print()
    {
        var one = Summary.Of([1.5]);
        Assert.IsFalse(one.HasInterval);
        Assert.AreEqual("n/a (1 run)", one.IntervalCell());
        Assert.AreEqual("1.500 (no interval: 1 run)", one.MeanWithInterval());
        Assert.AreEqual("1.000 ±0.248", Summary.Of([0.9, 1.0, 1.1]).MeanWithInterval());
    }

    [TestMethod]
    public void Two_runs_print_no_interval_and_call_nothing_best_or_different()
    {
        // The walk-through: with 1 repetition "± 0.000"; with 2, intervals wider than the means, and a "best" batch size all the same.
        var measurements = Runs("TcpClient2", 100, 0.50, 0.70).Concat(Runs("TcpClient2", 1000, 0.40, 0.41)).ToList();
        var sweep = ReportContent.BatchSweep(measurements);
        Assert.DoesNotContain("**best**", sweep);
        var table = MarkdownTable.With(sweep, "Batch size");
        var fastest = table.Row("1,000");
        Assert.AreEqual(("20", "0.405", "n/a (2 runs)", "49,383", "fastest mean (too few runs to call it best)"),
            (fastest["Batches"], fastest["Mean (s)"], fastest["±95% CI (s)"], fastest["Records/s"], fastest["Against the best"]));
        Assert.AreEqual("too few runs to tell", table.Cell("100", "Against the best"));

        var summaries = ReportContent.Summarise(Runs("DirectCopy", 1000, 1.0, 1.2).Concat(Runs("TcpClient2", 1000, 0.8, 0.9)));
        var console = ReportContent.ConsoleSummary(summaries);
        Assert.DoesNotContain("±", console);
        StringAssert.Contains(console, "no interval (2 runs)");
        Assert.AreEqual("fastest mean (too few runs to tell)", ReportContent.Verdict(summaries[0]));
        Assert.AreEqual("too few runs to tell", ReportContent.Verdict(summaries[1]));
    }

    [TestMethod]
    public void Records_per_second_is_the_same_figure_in_the_console_and_in_the_sweep_table()
    {
        // The walk-through saw 45,894 in FindBatchSize's console and 37,257 in its table for the same runs (a mean of rates against records over the mean time).
        var runs = Runs("TcpClient2", 1000, 0.3, 0.5, 0.7).ToList();
        var summary = ReportContent.Summarise(runs).Single();
        Assert.AreEqual(20_000 / 0.5, summary.MeanRecordsPerSecond, 1e-9);
        StringAssert.Contains(ReportContent.ConsoleSummary([summary]), "40,000 rec/s");
    }
}
