namespace IntegrationTasks.Results;

/// <summary>One transport at one record count, in two results files.</summary>
public sealed record ComparisonRow(string Transport, int Records, Summary Before, Summary After, double ChangePercent, double PValue)
{
    /// <summary>The row's runs' key (both files' runs share it: rows are matched by it); the label's fields where the files did not record it.</summary>
    public RunKey Key { get => _key ?? RunKey.Named(Transport, Records); init => _key = value; }

    private readonly RunKey? _key;

    /// <summary>
    /// The ratio to PipelinedCopy in each file, of one kind in both (<see cref="RatioKind"/>): the paired one when both files' runs
    /// were interleaved, else the ratio of the means; null without the reference.
    /// </summary>
    public double? RatioBefore { get; init; }
    public double? RatioAfter { get; init; }

    /// <summary>Which ratio <see cref="RatioBefore"/> and <see cref="RatioAfter"/> are: "paired" or "of means".</summary>
    public string RatioKind { get; init; } = Comparison.RatioOfMeans;

    /// <summary>How much the ratio to the reference moved: what a reader of both reports would see change.</summary>
    public double? RatioChangePercent => RatioBefore is > 0 && RatioAfter is { } after ? (after / RatioBefore.Value - 1) * 100 : null;

    /// <summary>The paired ratios over the rounds of each run (interleaved runs only): what tells a real move from the rounds' scatter.</summary>
    public Summary? PairedBefore { get; init; }
    public Summary? PairedAfter { get; init; }

    /// <summary>Welch's p-value for the paired ratio having moved between the runs; null unless both were interleaved with enough rounds.</summary>
    public double? RatioChangePValue => PairedBefore is { HasInterval: true } before && PairedAfter is { HasInterval: true } after
        && Welch.PValue(before, after) is var p && !double.IsNaN(p) ? p : null;

    /// <summary>The ratio moved by more than its rounds' scatter explains.</summary>
    public bool RatioMovedSignificantly => RatioChangePValue < Welch.SignificanceLevel;

    /// <summary>Nothing is called different on fewer than <see cref="Summary.MinimumForInterval"/> runs a side.</summary>
    public bool Significant => Before.HasInterval && After.HasInterval && !double.IsNaN(PValue) && PValue < Welch.SignificanceLevel;

    public bool RegressesBeyond(double thresholdPercent) => Significant && ChangePercent > thresholdPercent;
}

/// <summary>Reads results.json files and compares them transport by transport.</summary>
public static class Comparison
{
    public static List<ComparisonRow> Compare(ResultsFile before, ResultsFile after)
    {
        // A row is what its runs are (their whole key: records, clients, network, fault, provider, batch size…); its label alone would
        // join two payloads' rows, and its row key a loopback run's with a WAN run's.
        static (RowKey, RunKey?, int) KeyOf(TransportSummary s) => (s.Key, s.RunKey, s.Records);
        var old = Summaries.Of(before.Measurements).ToDictionary(KeyOf);
        var rows = new List<ComparisonRow>();
        foreach (var now in Summaries.Of(after.Measurements))
        {
            if (!old.TryGetValue(KeyOf(now), out var then))
                continue;
            rows.Add(new ComparisonRow(now.Key.LabelWithPayload, now.Records, then.Seconds, now.Seconds,
                (now.Seconds.Mean / then.Seconds.Mean - 1) * 100, Welch.PValue(then.Seconds, now.Seconds))
            {
                Key = now.RunKey ?? RunKey.Named(now.Key.Transport, now.Records),
                RatioBefore = Paired(then, now) ? then.PairedRatioToPipelined!.Mean : RatioOfMeansToReference(then),
                RatioAfter = Paired(then, now) ? now.PairedRatioToPipelined!.Mean : RatioOfMeansToReference(now),
                RatioKind = Paired(then, now) ? PairedRatio : RatioOfMeans,
                PairedBefore = then.Key.IsLimit ? null : then.PairedRatioToPipelined,
                PairedAfter = now.Key.IsLimit ? null : now.PairedRatioToPipelined,
            });
        }
        return rows;
    }

    public const string PairedRatio = "paired";
    public const string RatioOfMeans = "of means";

    /// <summary>Both rows have a paired ratio: the two are compared by it (never one paired against one of means).</summary>
    private static bool Paired(TransportSummary then, TransportSummary now) =>
        !now.Key.IsLimit && then.PairedRatioToPipelined is not null && now.PairedRatioToPipelined is not null;

    private static double? RatioOfMeansToReference(TransportSummary row) => row.Key.IsLimit ? null : row.RatioToPipelined;

    /// <summary>Environment entries that differ between the files (the date aside), which make a comparison doubtful.</summary>
    public static List<string> Differences(ResultsFile before, ResultsFile after) =>
        after.Environment.Where(e => e.Key != "Date (UTC)" && before.Environment.TryGetValue(e.Key, out var old) && old != e.Value)
            .Select(e => $"{e.Key}: {before.Environment[e.Key]} → {e.Value}").ToList();
}

/// <summary>
/// How alike two runs' paired ratios come out by chance alone, at the scatter their rounds showed: what a reader may expect of a
/// repeated RunAll before calling a ratio that moved a finding, and how many rounds would make every ratio repeat within
/// <see cref="WithinPercent"/> %. Each ratio's difference between two runs of n rounds is taken as Student's t with 2n − 2 degrees of
/// freedom and scale scatter·√(2/n), the ratios independent of each other; no true change is assumed.
/// </summary>
public static class RatioAgreement
{
    /// <summary>How close two runs' ratios should be to count as the same figure (a change of less than 5 %).</summary>
    public const double WithinPercent = 5;

    /// <summary>The chance that every ratio lands within <paramref name="withinPercent"/> % of the other run's.</summary>
    /// <param name="scatters">Each ratio's standard deviation over its rounds, as a fraction of its mean.</param>
    public static double Chance(IReadOnlyList<double> scatters, int rounds, double withinPercent = WithinPercent)
    {
        if (rounds < 2)
            return double.NaN;
        var chance = 1.0;
        foreach (var scatter in scatters.Where(s => s > 0))
            chance *= 2 * StudentT.Cdf(withinPercent / 100 / (scatter * Math.Sqrt(2.0 / rounds)), 2 * rounds - 2) - 1;
        return chance;
    }

    /// <summary>The fewest rounds a run at which that chance reaches <paramref name="wanted"/>; null beyond ten million.</summary>
    public static int? RoundsFor(IReadOnlyList<double> scatters, double wanted = 0.95, double withinPercent = WithinPercent) =>
        MonotoneSearch.Fewest(2, rounds => Chance(scatters, rounds, withinPercent) >= wanted);

    /// <summary>A ratio's scatter over both runs' rounds (pooled variance over the mean of both means).</summary>
    public static double Pooled(Summary before, Summary after) =>
        Math.Sqrt(((before.Count - 1) * before.StdDev * before.StdDev + (after.Count - 1) * after.StdDev * after.StdDev) / (before.Count + after.Count - 2))
        / ((before.Mean + after.Mean) / 2);
}
