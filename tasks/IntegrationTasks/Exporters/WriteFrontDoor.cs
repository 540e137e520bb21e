using System.Globalization;
using System.Text;
using System.Text.Json;
using IntegrationTasks.Results;
using IntegrationTasks.Transfer;

namespace IntegrationTasks.Exporters;

/// <summary>
/// The README's findings, written from one RunAll's results (scripts/pictures.sh runs it and takes the picture from the same
/// report): what the main comparison found, each family's best, what one call per record costs, and the run they come from (date,
/// commit, command), also kept beside the picture (docs/report-top.json) so that a test can tell the two name the same run.
/// </summary>
public sealed class WriteFrontDoor : IntegrationTask
{
    public const string Begin = "<!-- findings: written by scripts/pictures.sh from one RunAll; not edited by hand -->";
    public const string End = "<!-- /findings -->";

    [Required] public string ResultsFile { get; set; } = "";
    [Required] public string Readme { get; set; } = "";
    [Required] public string Stamp { get; set; } = "";

    /// <summary>docs/results.md: its current results (between <see cref="CurrentBegin"/> and <see cref="CurrentEnd"/>) are written from the same run.</summary>
    [Required] public string ResultsPage { get; set; } = "";

    public const string CurrentBegin = "<!-- current: written by scripts/pictures.sh from the run the README's findings come from; not edited by hand -->";
    public const string CurrentEnd = "<!-- /current -->";

    /// <summary>The command the run was made with, as the README shows it.</summary>
    [Required] public string Command { get; set; } = "";

    /// <summary>The transports' definitions: their Family metadata groups the findings.</summary>
    public ITaskItem[] Transports { get; set; } = [];

    protected override Task ExecuteAsync(CancellationToken cancellationToken)
    {
        var results = Results.ResultsFile.Load(ResultsFile);
        var families = Transports.Select(TransportDefinition.From).ToDictionary(t => t.Name, t => t.Family, StringComparer.Ordinal);
        var stamp = RunStamp.Of(results, Command);
        Replace(Readme, Begin, End, Block(results, families, stamp));
        Replace(ResultsPage, CurrentBegin, CurrentEnd, CurrentResults(results, families, stamp));
        File.WriteAllText(Stamp, JsonSerializer.Serialize(stamp, JsonFiles.Options) + "\n");
        Log.LogMessage(MessageImportance.High, "The README's findings, {0}'s current results and {1}: the RunAll of {2}, commit {3}.", ResultsPage, Stamp, stamp.Date, stamp.Commit);
        return Task.CompletedTask;
    }

    private static readonly CultureInfo Invariant = CultureInfo.InvariantCulture;

    /// <summary>Writes <paramref name="block"/> (markers included) over the file's block between the two markers.</summary>
    private static void Replace(string file, string begin, string end, string block)
    {
        var text = File.ReadAllText(file);
        var (from, to) = (text.IndexOf(begin, StringComparison.Ordinal), text.IndexOf(end, StringComparison.Ordinal));
        if (from < 0 || to < from)
            throw new IntegrationException(ErrorCodes.InvalidParameter, $"{file} has no block ({begin} … {end}) to write.");
        File.WriteAllText(file, text[..from] + block + text[(to + end.Length)..]);
    }

    /// <summary>
    /// The results page's current results, markers included: the run that made them, then a table a record count, every transport
    /// by its ratio to the reference (with its interval, and whether it can be told apart from the one above it).
    /// </summary>
    public static string CurrentResults(Results.ResultsFile results, IReadOnlyDictionary<string, string> families, RunStamp stamp)
    {
        var summaries = Summaries.Of(results.Measurements.Where(m => m.Completed).ToList());
        var text = new StringBuilder(CurrentBegin).Append('\n')
            .Append(string.Create(Invariant, $"**Run:** `{stamp.Command}` on {stamp.Date} UTC, commit `{stamp.Commit}`, a {stamp.Machine} machine, SQLite on both sides; "))
            .Append(string.Create(Invariant, $"{results.Measurements.Count(m => m.Completed && !m.Warmup):N0} measured runs, every one verified row by row.\n"));
        foreach (var size in ReportHeadline.MainFirst(summaries))
        {
            var rows = size.OrderBy(s => s.Key.IsReference || s.IsPeer ? 0 : 1).ThenBy(s => ReferenceRatio.Of(s)?.Value ?? s.Seconds.Mean).ToList();
            text.Append('\n').Append(string.Create(Invariant, $"### {size.Key.Heading}\n\n"))
                .Append("| Transport | Family | Mean (s) ±95% | × reference (paired ±95%) | × reference (ratio of means) | Against the one above |\n")
                .Append("|---|---|---|---|---|---|\n");
            ReferenceRatio? above = null;
            foreach (var row in rows)
            {
                var ratio = ReferenceRatio.Of(row);
                var against = row.IsPeer ? "peer, not ranked" : row.Key.IsReference ? "reference" : ratio is null ? "no reference in this run"
                    : above is null ? (ratio.WithinNoiseOfReference ? "within noise of the reference" : "the fastest")
                    : ratio.WithinNoiseOf(above) ? "within noise" : ratio.Ci95 is null || above.Ci95 is null ? "no interval to tell" : "slower";
                text.Append(string.Create(Invariant,
                    $"| `{row.Transport}` | {families.GetValueOrDefault(row.Key.Transport, "Baseline")} | {row.Seconds.MeanWithInterval()} | {(ratio is { Paired: true } ? ratio.Figure() + "× " + ratio.Reference : "–")} | {(row.RatioToPipelined is { } means && !row.Key.IsLimit ? means.ToString("F2", Invariant) : "–")} | {against} |\n"));
                if (ratio is not null && !row.Key.IsReference && !row.IsPeer)
                    above = ratio;
            }
        }
        return text.Append(CurrentEnd).ToString();
    }

    /// <summary>The findings block, markers included.</summary>
    public static string Block(Results.ResultsFile results, IReadOnlyDictionary<string, string> families, RunStamp stamp)
    {
        var measured = results.Measurements.Where(m => m.Completed && !m.Warmup).ToList();
        var summaries = Summaries.Of(results.Measurements.Where(m => m.Completed).ToList());
        if (summaries.Count == 0)
            throw new IntegrationException(ErrorCodes.ResultsUnreadable, "The results hold no completed run to write the README's findings from.");
        var sizes = ReportHeadline.MainFirst(summaries).Select(g => g.ToList()).ToList();
        var most = sizes.Max(s => s.Count(r => !r.Key.IsReference));
        var main = ReportHeadline.Main(summaries).ToList();
        // Each ratio with its interval (paired where the runs were interleaved, else of the means, and said so); a ratio whose
        // interval overlaps the one before it in a list, or holds 1, is marked within noise.
        var ranked = main.Where(s => !s.Key.IsReference && !s.IsPeer && ReferenceRatio.Of(s) is not null).OrderBy(s => ReferenceRatio.Of(s)!.Value).ToList();
        var lines = new List<string>();
        if (ranked.Count > 0)
        {
            var (fastest, slowest) = (ReferenceRatio.Of(ranked[0])!, ReferenceRatio.Of(ranked[^1])!);
            var kind = fastest.Paired ? "paired ratios, ±95%" : "ratios of the means";
            lines.Add(string.Create(Invariant,
                $"**At {main[0].Size.Heading}** the fastest transport, `{ranked[0].Transport}`, took {fastest.Figure()}× the time of the same database work with no transport (`PipelinedCopy`; {kind}){(fastest.WithinNoiseOfReference ? ", within noise of it" : "")}; the slowest, `{ranked[^1].Transport}`, {slowest.Figure()}×."));
            if (main.FirstOrDefault(s => s.IsPeer) is { } peer && main.FirstOrDefault(s => s.Key.IsReference && !s.IsPeer && s.Transport == "PipelinedCopy") is { } reference)
                lines.Add(string.Create(Invariant,
                    $"**The databases' own bulk copy** (`{peer.Transport}`) took {peer.Seconds.Mean / reference.Seconds.Mean:F2}× `PipelinedCopy`'s time (ratio of means), {ranked[0].Seconds.Mean / peer.Seconds.Mean:F1}× faster than the fastest transport: for a one-off copy between two databases, skip the integration layer."));
            var best = ranked.GroupBy(s => families.GetValueOrDefault(s.Key.Transport, "")).Where(g => g.Key.Length > 0)
                .Select(g => g.First()).ToList();
            if (best.Count > 1)
                lines.Add("**Each family's best**, × `PipelinedCopy`: " + Listed(best, s => $"{families[s.Key.Transport]} {{0}} (`{s.Transport}`)") + ".");
        }
        foreach (var capped in sizes.Where(s => s.Count(r => !r.Key.IsReference) < most))
        {
            var rows = capped.Where(s => !s.Key.IsReference && !s.IsPeer && ReferenceRatio.Of(s) is not null).OrderBy(s => ReferenceRatio.Of(s)!.Value).ToList();
            if (rows.Count > 0)
                lines.Add(string.Create(Invariant, $"**One call per record** (at {capped[0].Size.Heading}, their cap): ")
                    + Listed(rows, s => $"`{s.Transport}` {{0}}×", "F1") + " `PipelinedCopy`.");
        }
        var rounds = measured.GroupBy(m => m.Key).Select(g => g.Count()).DefaultIfEmpty().Max();
        var interleaved = measured.All(m => m.RoundSeed is not null) ? ", interleaved" : "";
        lines.Add(string.Create(Invariant, $"Every one of its {measured.Count:N0} measured runs was verified row by row; {rounds} rounds a row{interleaved}."));
        return new StringBuilder(Begin).Append('\n')
            .AppendJoin("", lines.Select(l => $"- {l}\n"))
            .Append('\n').Append(stamp.Sentence).Append('\n').Append(End).ToString();
    }

    /// <summary>
    /// Summaries in the order given, each as <paramref name="template"/> with its ratio's figure for {0}, and "within noise" where
    /// its interval overlaps the one before it.
    /// </summary>
    private static string Listed(IReadOnlyList<TransportSummary> rows, Func<TransportSummary, string> template, string format = "F2") =>
        string.Join("; ", rows.Select((s, i) =>
        {
            var ratio = ReferenceRatio.Of(s)!;
            var before = i > 0 ? ReferenceRatio.Of(rows[i - 1]) : null;
            return string.Format(Invariant, template(s), ratio.Figure(format)) + (before is not null && ratio.WithinNoiseOf(before) ? ", within noise" : "");
        }));
}

/// <summary>The run the README's findings and picture come from.</summary>
public sealed record RunStamp(string Date, string Commit, string Command, string Machine)
{
    public static RunStamp Of(Results.ResultsFile results, string command) =>
        new(results.Environment.GetValueOrDefault("Date (UTC)", "unknown"), results.Environment.GetValueOrDefault("Git commit", "unknown"), command,
            $"{results.Environment.GetValueOrDefault("Cores", "?")}-core {results.Environment.GetValueOrDefault("OS", "?")}");

    /// <summary>The line under the findings that names the run.</summary>
    [System.Text.Json.Serialization.JsonIgnore]
    public string Sentence => $"From one RunAll: `{Command}` on {Date} UTC, commit `{Commit}`, a {Machine} machine, SQLite on both sides (every table in [docs/results.md](docs/results.md#current-results)).";
}
