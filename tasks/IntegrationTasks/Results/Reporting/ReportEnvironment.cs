using System.Globalization;
using IntegrationTasks.Transfer;

namespace IntegrationTasks.Results;

/// <summary>
/// The report's environment: the machine and the repository (<see cref="RunEnvironment"/>), the server's database and data set, and
/// what the runs were as measured — transports, counts, payloads, repetitions, order — with the run's settings and its families'
/// notes. Its keys keep the order they are first set in: the report lists them so.
/// </summary>
public static class ReportEnvironment
{
    public static async Task<Dictionary<string, string>> DescribeAsync(IReadOnlyList<Measurement> measurements, string? repositoryRoot, string serverProvider,
        string? serverConnString, IReadOnlyList<(string Name, string Value)> runProperties, IReadOnlyList<(string Title, string Text)> notes,
        CancellationToken cancellationToken)
    {
        var environment = RunEnvironment.Describe(repositoryRoot);
        if (!string.IsNullOrEmpty(serverConnString) && measurements.Count > 0)
        {
            var server = Data.Database.Create(serverProvider, serverConnString);
            environment["Database"] = await RunEnvironment.DatabaseVersionAsync(server, cancellationToken).ConfigureAwait(false);
            environment["Data set"] = await Data.DataSetFingerprint.OfAsync(server, measurements.Max(m => m.Records), cancellationToken)
                .ConfigureAwait(false);
            // Each payload's pass makes ServiceTable again: what is there now is the last pass's.
            if (measurements.Select(m => m.PayloadBytes ?? 0).Distinct().Count() > 1)
                environment["Data set"] += " (the last payload pass's rows; each pass made its own)";
        }
        // What was measured is read from the measurements themselves, not from properties that may not have applied.
        if (measurements.Count > 0)
            environment["Transports"] = string.Join(", ", measurements.Select(m => m.Transport).Distinct());
        if (measurements.Count > 0)
        {
            environment["Record counts"] = string.Join(", ", measurements.Select(m => m.Records).Distinct().Order());
            environment["Batch sizes"] = string.Join(", ", measurements.Select(m => m.BatchSize).Distinct().Order());
            if (measurements.Any(m => m.PayloadBytes > 0))
                environment["Payloads"] = string.Join("; ", measurements.GroupBy(m => (Bytes: m.PayloadBytes ?? 0, m.PayloadKind)).OrderBy(g => g.Key)
                    .Select(g => (g.Key.Bytes == 0 ? "none" : $"{RunKey.PayloadSize(g.Key.Bytes)} ({g.Key.PayloadKind ?? "Bytes"})")
                        + $" in batches of {string.Join(", ", g.Select(m => m.BatchSize).Distinct().Order().Select(b => b.ToString("N0", CultureInfo.InvariantCulture)))}"));
        }
        foreach (var (name, value) in runProperties)
            environment[name] = value;
        // As measured, not as the properties of this build say (-t:Report over an earlier run's log has today's defaults).
        if (measurements.Count > 0)
        {
            environment["Repetitions"] = MeasuredRepetitions(measurements);
            var warmups = measurements.Where(m => m.Warmup).GroupBy(m => (m.Transport, m.Records, m.BatchSize, m.Clients)).Select(g => g.Count()).Distinct().Order().ToList();
            environment["Warmup"] = warmups.Count == 0 ? "false" : $"{string.Join(", ", warmups)} run(s) a transport before its measured ones";
            var seeds = measurements.Select(m => m.RoundSeed).Distinct().ToList();
            environment["Repetition order"] = seeds is [{ } seed]
                ? $"interleaved: round r of every transport before round r+1 of any, each round's order shuffled (seed {seed.ToString(CultureInfo.InvariantCulture)})"
                : seeds is [null] ? "by transport: every repetition of one transport, then the next" : "mixed (runs of several RunAlls)";
            if (seeds is [not null] && ReferenceRunsBetween(measurements) is { Length: > 0 } between)
                environment["Repetition order"] += "; " + between;
            // StopAtPrecision: what was asked and what the rounds reached, judged again on the runs as recorded.
            if (environment.TryGetValue("StopAtPrecision", out var asked))
                environment["StopAtPrecision"] = RatioPrecision.TryParsePercent(asked, out var precision) ? RatioPrecision.ReportLine(precision, measurements) : asked;
        }
        foreach (var (title, text) in notes)
            environment[$"Note ({title})"] = text;
        if (measurements.Count > 0)
            environment["ServerWork"] = string.Join(", ", measurements.GroupBy(m => m.ServerReads)
                .Select(g => $"{g.Key} ({ReportContent.ServerWorkLabel(g.Key)}: {string.Join(", ", g.Select(m => m.Transport).Distinct())})"));
        return environment;
    }

    /// <summary>How often the reference ran when ReferenceEvery put it between the rounds' other runs; empty when it ran once a round.</summary>
    internal static string ReferenceRunsBetween(IReadOnlyList<Measurement> measurements)
    {
        var measured = measurements.Where(m => !m.Warmup).GroupBy(m => (m.Transport, m.Records, m.Clients, Kind: RowKey.KindOf(m))).ToList();
        var rounds = measured.Where(g => g.Key.Kind != RunKind.Reference).Select(g => g.Count()).DefaultIfEmpty().Max();
        var extra = measured.Where(g => g.Key.Kind == RunKind.Reference && g.Count() > rounds).ToList();
        if (rounds == 0 || extra.Count == 0)
            return "";
        var (fewest, most) = (extra.Min(g => g.Count()), extra.Max(g => g.Count()));
        return string.Join(", ", extra.Select(g => g.Key.Transport).Distinct()) + string.Create(CultureInfo.InvariantCulture,
            $" also ran between the rounds' other runs ({(fewest == most ? $"{most}" : $"{fewest}–{most}")} runs against {rounds} rounds, ReferenceEvery), and each run's paired ratio is to its run nearest in time");
    }

    /// <summary>
    /// How many measured runs each row had, as a list of the distinct counts ("10", or "5, 10"): a row is what the tables show
    /// as one (<see cref="RowKey"/>) at one record count.
    /// </summary>
    internal static string MeasuredRepetitions(IEnumerable<Measurement> measurements) =>
        string.Join(", ", RowKey.Of(measurements.Where(m => !m.Warmup)).GroupBy(k => (k.Key, k.Run.Records))
            .Select(g => g.Count()).Distinct().Order());
}
