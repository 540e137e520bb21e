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

    /// <summary>The command the run was made with, as the README shows it.</summary>
    [Required] public string Command { get; set; } = "";

    /// <summary>The transports' definitions: their Family metadata groups the findings.</summary>
    public ITaskItem[] Transports { get; set; } = [];

    protected override Task ExecuteAsync(CancellationToken cancellationToken)
    {
        var results = Results.ResultsFile.Load(ResultsFile);
        var families = Transports.Select(TransportDefinition.From).ToDictionary(t => t.Name, t => t.Family, StringComparer.Ordinal);
        var stamp = RunStamp.Of(results, Command);
        var block = Block(results, families, stamp);
        var readme = File.ReadAllText(Readme);
        var (begin, end) = (readme.IndexOf(Begin, StringComparison.Ordinal), readme.IndexOf(End, StringComparison.Ordinal));
        if (begin < 0 || end < begin)
            throw new IntegrationException(ErrorCodes.InvalidParameter, $"{Readme} has no findings block ({Begin} … {End}) to write.");
        File.WriteAllText(Readme, readme[..begin] + block + readme[(end + End.Length)..]);
        File.WriteAllText(Stamp, JsonSerializer.Serialize(stamp, JsonFiles.Options) + "\n");
        Log.LogMessage(MessageImportance.High, "The README's findings and {0}: the RunAll of {1}, commit {2}.", Stamp, stamp.Date, stamp.Commit);
        return Task.CompletedTask;
    }

    private static readonly CultureInfo Invariant = CultureInfo.InvariantCulture;

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
        // The ratio of the means, as the report's findings give it (the picture shows them beside this block).
        static double? Ratio(TransportSummary s) => s.Key.IsLimit ? null : s.RatioToPipelined;
        var ranked = main.Where(s => !s.Key.IsReference && !s.IsPeer && Ratio(s) is not null).OrderBy(s => Ratio(s)).ToList();
        var lines = new List<string>();
        if (ranked.Count > 0)
        {
            var (fastest, slowest) = (ranked[0], ranked[^1]);
            lines.Add(string.Create(Invariant,
                $"**At {main[0].Size.Heading}** the fastest transport, `{fastest.Transport}`, took {Ratio(fastest):F2}× the time of the same database work with no transport (`PipelinedCopy`); the slowest, `{slowest.Transport}`, {Ratio(slowest):F2}×."));
            if (main.FirstOrDefault(s => s.IsPeer) is { } peer && main.FirstOrDefault(s => s.Key.IsReference && !s.IsPeer && s.Transport == "PipelinedCopy") is { } reference)
                lines.Add(string.Create(Invariant,
                    $"**The databases' own bulk copy** (`{peer.Transport}`) took {peer.Seconds.Mean / reference.Seconds.Mean:F2}× `PipelinedCopy`'s time, {Ratio(fastest)! * reference.Seconds.Mean / peer.Seconds.Mean:F1}× faster than the fastest transport: for a one-off copy between two databases, skip the integration layer."));
            var best = ranked.GroupBy(s => families.GetValueOrDefault(s.Key.Transport, "")).Where(g => g.Key.Length > 0)
                .Select(g => g.First()).OrderBy(s => Ratio(s)).ToList();
            if (best.Count > 1)
                lines.Add("**Each family's best**, × `PipelinedCopy`: "
                    + string.Join("; ", best.Select(s => string.Create(Invariant, $"{families[s.Key.Transport]} {Ratio(s):F2} (`{s.Transport}`)"))) + ".");
        }
        foreach (var capped in sizes.Where(s => s.Count(r => !r.Key.IsReference) < most))
        {
            var rows = capped.Where(s => !s.Key.IsReference && !s.IsPeer && Ratio(s) is not null).OrderBy(s => Ratio(s)).ToList();
            if (rows.Count > 0)
                lines.Add(string.Create(Invariant, $"**One call per record** (at {capped[0].Size.Heading}, their cap): ")
                    + string.Join(", ", rows.Select(s => string.Create(Invariant, $"`{s.Transport}` {Ratio(s):F1}×"))) + " `PipelinedCopy`.");
        }
        var rounds = measured.GroupBy(m => m.Key).Select(g => g.Count()).DefaultIfEmpty().Max();
        var interleaved = measured.All(m => m.RoundSeed is not null) ? ", interleaved" : "";
        lines.Add(string.Create(Invariant, $"Every one of its {measured.Count:N0} measured runs was verified row by row; {rounds} rounds a row{interleaved}."));
        return new StringBuilder(Begin).Append('\n')
            .AppendJoin("", lines.Select(l => $"- {l}\n"))
            .Append('\n').Append(stamp.Sentence).Append('\n').Append(End).ToString();
    }
}

/// <summary>The run the README's findings and picture come from.</summary>
public sealed record RunStamp(string Date, string Commit, string Command, string Machine)
{
    public static RunStamp Of(Results.ResultsFile results, string command) =>
        new(results.Environment.GetValueOrDefault("Date (UTC)", "unknown"), results.Environment.GetValueOrDefault("Git commit", "unknown"), command,
            $"{results.Environment.GetValueOrDefault("Cores", "?")}-core {results.Environment.GetValueOrDefault("OS", "?")}");

    /// <summary>The line under the findings that names the run.</summary>
    [System.Text.Json.Serialization.JsonIgnore]
    public string Sentence => $"From one RunAll: `{Command}` on {Date} UTC, commit `{Commit}`, a {Machine} machine, SQLite on both sides (its entry in [docs/results.md](docs/results.md)).";
}
