using System.Globalization;
using System.Text;
using System.Text.Json;
using IntegrationTasks.Transfer;

namespace IntegrationTasks.Results;

/// <summary>One transport at one record count, in two results files.</summary>
public sealed record ComparisonRow(string Transport, int Records, Summary Before, Summary After, double ChangePercent, double PValue)
{
    /// <summary>The row's runs' key (both files' runs share it: rows are matched by it); the label's fields where the files did not record it.</summary>
    public RunKey Key { get => _key ?? RunKey.Named(Transport, Records); init => _key = value; }

    private readonly RunKey? _key;

    /// <summary>The ratio to PipelinedCopy in each file (the paired one when the runs were interleaved); null without the reference.</summary>
    public double? RatioBefore { get; init; }
    public double? RatioAfter { get; init; }

    /// <summary>How much the ratio to the reference moved: what a reader of both reports would see change.</summary>
    public double? RatioChangePercent => RatioBefore is > 0 && RatioAfter is { } after ? (after / RatioBefore.Value - 1) * 100 : null;

    /// <summary>The paired ratios over the rounds of each run (interleaved runs only): what tells a real move from the rounds' scatter.</summary>
    public Summary? PairedBefore { get; init; }
    public Summary? PairedAfter { get; init; }

    /// <summary>Welch's p-value for the paired ratio having moved between the runs; null unless both were interleaved with enough rounds.</summary>
    public double? RatioChangePValue => PairedBefore is { HasInterval: true } before && PairedAfter is { HasInterval: true } after
        && Welch.PValue(before, after) is var p && !double.IsNaN(p) ? p : null;

    /// <summary>The ratio moved by more than its rounds' scatter explains.</summary>
    public bool RatioMovedSignificantly => RatioChangePValue < ReportContent.SignificanceLevel;

    /// <summary>Nothing is called different on fewer than <see cref="Summary.MinimumForInterval"/> runs a side.</summary>
    public bool Significant => Before.HasInterval && After.HasInterval && !double.IsNaN(PValue) && PValue < ReportContent.SignificanceLevel;

    public bool RegressesBeyond(double thresholdPercent) => Significant && ChangePercent > thresholdPercent;
}

/// <summary>Reads results.json files and compares them transport by transport.</summary>
public static class Comparison
{
    public sealed record ResultsFile(IReadOnlyDictionary<string, string> Environment, IReadOnlyList<Measurement> Measurements);

    public static ResultsFile Load(string path)
    {
        try
        {
            using var document = JsonDocument.Parse(File.ReadAllText(path));
            var environment = document.RootElement.TryGetProperty("environment", out var env)
                ? env.EnumerateObject().ToDictionary(p => p.Name, p => p.Value.GetString() ?? "")
                : new Dictionary<string, string>();
            var measurements = document.RootElement.GetProperty("measurements").EnumerateArray()
                .Select(m => m.Deserialize<Measurement>(MeasurementLog.Json)!).ToList();
            return new ResultsFile(environment, measurements);
        }
        catch (Exception e) when (e is IOException or JsonException or KeyNotFoundException or InvalidOperationException)
        {
            throw new IntegrationException(ErrorCodes.ResultsUnreadable, $"{path} is not a results file of this suite: {e.Message}", e);
        }
    }

    public static List<ComparisonRow> Compare(ResultsFile before, ResultsFile after)
    {
        // A row is what its runs are (their whole key: records, clients, network, fault, provider, batch size…); its label alone would
        // join two payloads' rows, and its row key a loopback run's with a WAN run's.
        static (RowKey, RunKey?, int) KeyOf(TransportSummary s) => (s.Key, s.RunKey, s.Records);
        var old = ReportContent.Summarise(before.Measurements).ToDictionary(KeyOf);
        var rows = new List<ComparisonRow>();
        foreach (var now in ReportContent.Summarise(after.Measurements))
        {
            if (!old.TryGetValue(KeyOf(now), out var then))
                continue;
            rows.Add(new ComparisonRow(now.Key.LabelWithPayload, now.Records, then.Seconds, now.Seconds,
                (now.Seconds.Mean / then.Seconds.Mean - 1) * 100, Welch.PValue(then.Seconds, now.Seconds))
            {
                Key = now.RunKey ?? RunKey.Named(now.Key.Transport, now.Records),
                RatioBefore = RatioToReference(then), RatioAfter = RatioToReference(now),
                PairedBefore = then.Key.IsLimit ? null : then.PairedRatioToPipelined,
                PairedAfter = now.Key.IsLimit ? null : now.PairedRatioToPipelined,
            });
        }
        return rows;
    }

    private static double? RatioToReference(TransportSummary row) =>
        row.Key.IsLimit ? null : row.PairedRatioToPipelined?.Mean ?? row.RatioToPipelined;

    /// <summary>Environment entries that differ between the files (the date aside), which make a comparison doubtful.</summary>
    public static List<string> Differences(ResultsFile before, ResultsFile after) =>
        after.Environment.Where(e => e.Key != "Date (UTC)" && before.Environment.TryGetValue(e.Key, out var old) && old != e.Value)
            .Select(e => $"{e.Key}: {before.Environment[e.Key]} → {e.Value}").ToList();

    /// <summary>The comparison's columns: a transport at a record count, before and after, and what the change means.</summary>
    public static IReadOnlyList<ReportColumn<ComparisonRow>> Columns(double thresholdPercent) =>
    [
        new("method", "Method", r => r.Transport, Numeric: false),
        .. RunKey.Fields.Select(f => new ReportColumn<ComparisonRow>(f.Id, f.Id, r => f.Text(r.Key), Numeric: false)),
        new("beforeSeconds", "Before (s)", r => r.Before.MeanWithInterval()),
        new("afterSeconds", "After (s)", r => r.After.MeanWithInterval()),
        new("changePercent", "Change", r => SignedPercent(r.ChangePercent)),
        new("p", "p", r => r.PValue.ToString("0.###", CultureInfo.InvariantCulture)),
        new("ratioBefore", "× PipelinedCopy before", r => ReportTable.Cell(r.RatioBefore, "F3")),
        new("ratioAfter", "× PipelinedCopy after", r => ReportTable.Cell(r.RatioAfter, "F3")),
        new("ratioChangePercent", "Ratio change", r => r.RatioChangePercent is { } c ? SignedPercent(c) : "–"),
        new("ratioChangeP", "Ratio moved beyond its rounds' scatter", r => r.RatioChangePValue is { } p
            ? string.Create(CultureInfo.InvariantCulture, $"{(p < ReportContent.SignificanceLevel ? "yes" : "no")} (p={p:0.###})") : "–", Numeric: false),
        new("verdict", "Verdict", r => !r.Significant ? "no significant change"
            : r.RegressesBeyond(thresholdPercent) ? string.Create(CultureInfo.InvariantCulture, $"**regression** (over {thresholdPercent}%)")
            : r.ChangePercent > 0 ? "slower, within the threshold" : "faster", Numeric: false),
    ];

    /// <summary>"+2.3%", "-1.0%"; a change that rounds to zero is "+0.0%" either side (with two sections .NET wrote "-+0.0%").</summary>
    private static string SignedPercent(double percent) => percent.ToString("+0.0;-0.0;+0.0", CultureInfo.InvariantCulture) + "%";

    public static string Markdown(IReadOnlyList<ComparisonRow> rows, IReadOnlyList<string> differences, double thresholdPercent, bool diagnostics = false)
    {
        var md = new StringBuilder("# Comparison with a previous run\n\n");
        if (differences.Count > 0)
            md.Append("Not the same conditions — read with care:\n\n").AppendJoin("", differences.Select(d => $"- {d}\n")).Append('\n');
        md.Append(ReportTable.Markdown(Columns(thresholdPercent), rows));
        var changes = rows.Where(r => r.RatioChangePercent is not null).Select(r => Math.Abs(r.RatioChangePercent!.Value)).Order().ToList();
        if (changes.Count > 0)
            md.Append(string.Create(CultureInfo.InvariantCulture,
                $"\nThe ratios to PipelinedCopy (paired where the runs were interleaved) moved by {Summary.Quantile(changes, 0.5):F1} % (median) and at most {changes[^1]:F1} % ({rows.First(r => r.RatioChangePercent is { } c && Math.Abs(c) == changes[^1]).Transport}); {changes.Count(c => c < RatioAgreement.WithinPercent)} of {changes.Count} by less than {RatioAgreement.WithinPercent} %.\n"));
        var tested = rows.Where(r => r.RatioChangePValue is not null).ToList();
        if (tested.Count > 0)
        {
            var moved = tested.Where(r => r.RatioMovedSignificantly).Select(r => r.Transport).ToList();
            md.Append(string.Create(CultureInfo.InvariantCulture, $"Judged against the scatter of each run's rounds (Welch, p < {ReportContent.SignificanceLevel}): "))
                .Append(moved.Count == 0
                    ? $"none of the {tested.Count} paired ratios moved beyond what its rounds vary by.\n"
                    : $"{moved.Count} of {tested.Count} paired ratios moved ({string.Join(", ", moved)}); the others within what their rounds vary by.\n");
            if (diagnostics)
                md.Append(RatioAgreement.Sentence(tested));
        }
        return md.ToString();
    }
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

    /// <summary>The comparison's sentence on it, for rows whose paired ratios both runs measured with an interval.</summary>
    public static string Sentence(IReadOnlyList<ComparisonRow> tested)
    {
        var scatters = tested.Select(r => Pooled(r.PairedBefore!, r.PairedAfter!)).ToList();
        var rounds = tested.Min(r => Math.Min(r.PairedBefore!.Count, r.PairedAfter!.Count));
        var chance = Chance(scatters, rounds);
        var needed = RoundsFor(scatters);
        return string.Create(CultureInfo.InvariantCulture,
            $"By chance alone, at the scatter of these rounds (each paired ratio's over both runs, median {Summary.Quantile([.. scatters.Order()], 0.5) * 100:F1} %), two runs of {rounds} rounds each put all {scatters.Count} paired ratios within {WithinPercent} % of each other {Percent(chance)} of the time; ")
            + (needed is { } n ? string.Create(CultureInfo.InvariantCulture, $"about {n:N0} rounds each would make it 19 times in 20 (-p:Repetitions).\n") : "no number of rounds would make it 19 times in 20.\n");
    }

    private static string Percent(double chance) => (chance * 100) switch
    {
        < 0.01 => "less than 0.01 %",
        > 99 => "more than 99 %",
        var percent => percent.ToString(percent >= 10 ? "F0" : "G2", CultureInfo.InvariantCulture) + " %",
    };
}

/// <summary>
/// Compares this run's results with a previous results file: the change of each transport with its
/// significance (Welch's test), and a coded error — a failed build, so usable as a CI gate — for
/// every chosen transport that got slower beyond the threshold with significance.
/// </summary>
public sealed class CompareResults : IntegrationTask
{
    [Required] public string Baseline { get; set; } = "";
    [Required] public string Current { get; set; } = "";

    /// <summary>The transports that gate; empty means all.</summary>
    public string[] Transports { get; set; } = [];

    public double ThresholdPercent { get; set; } = 10;

    /// <summary>Add the chance that two runs' ratios agree by chance alone (<see cref="RatioAgreement"/>).</summary>
    public bool NoiseDiagnostics { get; set; }

    /// <summary>Every transport the suite defines: a gated name outside them is a misspelling, refused (IT1001).</summary>
    public string[] KnownTransports { get; set; } = [];

    public string? OutputFile { get; set; }

    [Output] public int Regressions { get; private set; }

    protected override Task ExecuteAsync(CancellationToken cancellationToken)
    {
        var before = Comparison.Load(Baseline);
        var after = Comparison.Load(Current);
        var gated = Transports.SelectMany(t => t.Split('+')).Select(t => t.Trim()).Where(t => t.Length > 0).ToHashSet();
        CheckGated(gated, before, after);
        var rows = Comparison.Compare(before, after);
        if (rows.Count == 0)
            throw new IntegrationException(ErrorCodes.ResultsUnreadable, $"{Baseline} and {Current} have no transport and record count in common.");
        var differences = Comparison.Differences(before, after);
        foreach (var difference in differences)
            Log.LogWarning(null, ErrorCodes.ResultsNotComparable, null, null, 0, 0, 0, 0, "The runs differ: {0}", difference);
        var markdown = Comparison.Markdown(rows, differences, ThresholdPercent, NoiseDiagnostics);
        if (!string.IsNullOrEmpty(OutputFile))
        {
            // Comparing two runs kept elsewhere from a fresh ArtifactsDir: its results folder is not there yet.
            Directory.CreateDirectory(Path.GetDirectoryName(Path.GetFullPath(OutputFile))!);
            File.WriteAllText(OutputFile, markdown);
        }
        Log.LogMessage(MessageImportance.High, "{0}", markdown);
        foreach (var row in rows.Where(r => (gated.Count == 0 || gated.Contains(r.Transport)) && r.RegressesBeyond(ThresholdPercent)))
        {
            Regressions++;
            Log.LogError(null, ErrorCodes.Regression, null, null, 0, 0, 0, 0,
                "{0} at {1:N0} records regressed {2:F1}% ({3:F3} s → {4:F3} s, p={5:0.###}), over the {6}% threshold.",
                row.Transport, row.Records, row.ChangePercent, row.Before.Mean, row.After.Mean, row.PValue, ThresholdPercent);
        }
        return Task.CompletedTask;
    }

    /// <summary>A gate that checks nothing must not pass: every transport it names is known and was measured in both runs.</summary>
    private void CheckGated(IReadOnlySet<string> gated, Comparison.ResultsFile before, Comparison.ResultsFile after)
    {
        var unknown = gated.Where(t => KnownTransports.Length > 0 && !KnownTransports.Contains(t, StringComparer.Ordinal)).Order().ToList();
        if (unknown.Count > 0)
            throw new IntegrationException(ErrorCodes.InvalidParameter,
                $"Unknown transport(s) in CompareTransports: {string.Join(", ", unknown)}. Known: {string.Join(", ", KnownTransports)}.");
        foreach (var (file, results) in new[] { (Baseline, before), (Current, after) })
        {
            var measured = results.Measurements.Where(m => m.Completed && !m.Warmup).Select(m => m.Transport).ToHashSet();
            var missing = gated.Where(t => !measured.Contains(t)).Order().ToList();
            if (missing.Count > 0)
                throw new IntegrationException(ErrorCodes.ComparedTransportMissing,
                    $"CompareTransports names {string.Join(", ", missing)}, not measured in {file} (measured there: {string.Join(", ", measured.Order())}); nothing to compare.");
        }
    }
}
