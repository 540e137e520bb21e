using System.Globalization;
using System.Text;
using IntegrationTasks.Results;

namespace IntegrationTasks.Exporters;

/// <summary>The comparison of two results files as Markdown: a row per run key, before and after, and what the change means.</summary>
public static class ComparisonMarkdown
{
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
        new("ratioKind", "Ratio", r => r.RatioBefore is null || r.RatioAfter is null ? "–" : r.RatioKind, Numeric: false),
        new("ratioChangePercent", "Ratio change", r => r.RatioChangePercent is { } c ? SignedPercent(c) : "–"),
        new("ratioChangeP", "Ratio moved beyond its rounds' scatter", r => r.RatioChangePValue is { } p
            ? string.Create(CultureInfo.InvariantCulture, $"{(p < Welch.SignificanceLevel ? "yes" : "no")} (p={p:0.###})") : "–", Numeric: false),
        new("verdict", "Verdict", r => !r.Significant ? "no significant change"
            : r.RegressesBeyond(thresholdPercent) ? string.Create(CultureInfo.InvariantCulture, $"**regression** (over {thresholdPercent}%)")
            : r.ChangePercent > 0 ? "slower, within the threshold" : "faster", Numeric: false),
    ];

    /// <summary>"+2.3%", "-1.0%"; a change that rounds to zero is "+0.0%" either side (with two sections .NET wrote "-+0.0%").</summary>
    private static string SignedPercent(double percent) => percent.ToString("+0.0;-0.0;+0.0", CultureInfo.InvariantCulture) + "%";

    public static string Of(IReadOnlyList<ComparisonRow> rows, IReadOnlyList<string> differences, double thresholdPercent, bool diagnostics = false, string? which = null)
    {
        var md = new StringBuilder("# Comparison with a previous run\n\n");
        if (which is not null)
            md.Append(which).Append("\n\n");
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
            md.Append(string.Create(CultureInfo.InvariantCulture, $"Judged against the scatter of each run's rounds (Welch, p < {Welch.SignificanceLevel}): "))
                .Append(moved.Count == 0
                    ? $"none of the {tested.Count} paired ratios moved beyond what its rounds vary by.\n"
                    : $"{moved.Count} of {tested.Count} paired ratios moved ({string.Join(", ", moved)}); the others within what their rounds vary by.\n");
            if (diagnostics)
                md.Append(RatioAgreementSentence(tested));
        }
        return md.ToString();
    }

    /// <summary>The comparison's sentence on it, for rows whose paired ratios both runs measured with an interval.</summary>
    private static string RatioAgreementSentence(IReadOnlyList<ComparisonRow> tested)
    {
        var scatters = tested.Select(r => RatioAgreement.Pooled(r.PairedBefore!, r.PairedAfter!)).ToList();
        var rounds = tested.Min(r => Math.Min(r.PairedBefore!.Count, r.PairedAfter!.Count));
        var chance = RatioAgreement.Chance(scatters, rounds);
        var needed = RatioAgreement.RoundsFor(scatters);
        return string.Create(CultureInfo.InvariantCulture,
            $"By chance alone, at the scatter of these rounds (each paired ratio's over both runs, median {Summary.Quantile([.. scatters.Order()], 0.5) * 100:F1} %), two runs of {rounds} rounds each put all {scatters.Count} paired ratios within {RatioAgreement.WithinPercent} % of each other {Percent(chance)} of the time; ")
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
/// Compares two RunAlls: by their ids in the results database (by default the latest and the previous one like it), or two
/// results files. The change of each transport with its significance (Welch's test), and a coded error — a failed build, so usable
/// as a CI gate — for every chosen transport that got slower beyond the threshold with significance.
/// </summary>
public sealed class CompareResults : IntegrationTask
{
    /// <summary>A previous results.json; empty: compare from the results database.</summary>
    public string Baseline { get; set; } = "";

    /// <summary>The results.json to compare with <see cref="Baseline"/> (file mode only).</summary>
    public string Current { get; set; } = "";

    /// <summary>The RunAlls compared in the database (-t:History lists them): 0 for the latest complete one, and for the one before it like it.</summary>
    public long BaseRun { get; set; }
    public long CurrentRun { get; set; }

    public string HistoryProvider { get; set; } = "Sqlite";
    public string HistoryConnString { get; set; } = "";

    /// <summary>The transports that gate; empty means all.</summary>
    public string[] Transports { get; set; } = [];

    public double ThresholdPercent { get; set; } = 10;

    /// <summary>Add the chance that two runs' ratios agree by chance alone (<see cref="RatioAgreement"/>).</summary>
    public bool NoiseDiagnostics { get; set; }

    /// <summary>Every transport the suite defines: a gated name outside them is a misspelling, refused (IT1001).</summary>
    public string[] KnownTransports { get; set; } = [];

    public string? OutputFile { get; set; }

    [Output] public int Regressions { get; private set; }

    protected override async Task ExecuteAsync(CancellationToken cancellationToken)
    {
        var (before, after, beforeName, afterName, which) = Baseline.Length > 0
            ? (ResultsFile.Load(Baseline), ResultsFile.Load(Current), Baseline, Current, null)
            : await FromHistoryAsync(cancellationToken).ConfigureAwait(false);
        var gated = Transports.SelectMany(t => t.Split('+')).Select(t => t.Trim()).Where(t => t.Length > 0).ToHashSet();
        CheckGated(gated, (beforeName, before), (afterName, after));
        var rows = Comparison.Compare(before, after);
        if (rows.Count == 0)
            throw new IntegrationException(ErrorCodes.ResultsUnreadable, $"{beforeName} and {afterName} have no transport and record count in common.");
        var differences = Comparison.Differences(before, after);
        foreach (var difference in differences)
            Log.LogWarning(null, ErrorCodes.ResultsNotComparable, null, null, 0, 0, 0, 0, "The runs differ: {0}", difference);
        var markdown = ComparisonMarkdown.Of(rows, differences, ThresholdPercent, NoiseDiagnostics, which);
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
    }

    /// <summary>The two RunAlls from the database: the ones named, else the latest complete one and the previous one like it.</summary>
    private async Task<(ResultsFile, ResultsFile, string, string, string)> FromHistoryAsync(CancellationToken cancellationToken)
    {
        if (HistoryConnString.Length == 0)
            throw new IntegrationException(ErrorCodes.MissingBaseline, "Compare needs -p:Baseline=<a previous results-….json>, or the results database (History=true).");
        var history = ResultsHistory.Open(HistoryProvider, HistoryConnString);
        var entries = await history.ListAsync(cancellationToken).ConfigureAwait(false);
        var current = CurrentRun > 0 ? CurrentRun
            : entries.LastOrDefault(e => e.Status == HistoryEntry.Complete)?.Id
              ?? throw new IntegrationException(ErrorCodes.MissingBaseline, $"The results database ({history.Database.Describe()}) holds no finished RunAll yet: run one first.");
        var baseline = BaseRun > 0 ? BaseRun
            : await history.PreviousLikeAsync(current, cancellationToken).ConfigureAwait(false)
              ?? throw new IntegrationException(ErrorCodes.MissingBaseline,
                  $"No RunAll before {current} in the results database measured any of its runs (a transport at a record count under the same settings): name one with -p:BaseRun= (list them with -t:History).");
        string Describe(long id) => entries.FirstOrDefault(e => e.Id == id) is { } e
            ? string.Create(System.Globalization.CultureInfo.InvariantCulture, $"RunAll {id} ({e.StartedUtc:yyyy-MM-dd HH:mm} UTC, commit {e.Commit}{(e.Status == HistoryEntry.Complete ? "" : ", not finished")})")
            : $"RunAll {id}";
        Log.LogMessage(MessageImportance.High, "Comparing {0} with {1}.", Describe(current), Describe(baseline));
        return (await history.LoadAsync(baseline, cancellationToken).ConfigureAwait(false), await history.LoadAsync(current, cancellationToken).ConfigureAwait(false),
            $"RunAll {baseline}", $"RunAll {current}", $"Before: {Describe(baseline)}. After: {Describe(current)}.");
    }

    /// <summary>A gate that checks nothing must not pass: every transport it names is known and was measured in both runs.</summary>
    private void CheckGated(IReadOnlySet<string> gated, (string Name, ResultsFile Results) before, (string Name, ResultsFile Results) after)
    {
        var unknown = gated.Where(t => KnownTransports.Length > 0 && !KnownTransports.Contains(t, StringComparer.Ordinal)).Order().ToList();
        if (unknown.Count > 0)
            throw new IntegrationException(ErrorCodes.InvalidParameter,
                $"Unknown transport(s) in CompareTransports: {string.Join(", ", unknown)}. Known: {string.Join(", ", KnownTransports)}.");
        foreach (var (file, results) in new[] { before, after })
        {
            var measured = results.Measurements.Where(m => m.Completed && !m.Warmup).Select(m => m.Transport).ToHashSet();
            var missing = gated.Where(t => !measured.Contains(t)).Order().ToList();
            if (missing.Count > 0)
                throw new IntegrationException(ErrorCodes.ComparedTransportMissing,
                    $"CompareTransports names {string.Join(", ", missing)}, not measured in {file} (measured there: {string.Join(", ", measured.Order())}); nothing to compare.");
        }
    }
}
