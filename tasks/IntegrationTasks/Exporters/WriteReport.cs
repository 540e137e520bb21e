using IntegrationTasks.Results;
using IntegrationTasks.Transfer;

namespace IntegrationTasks.Exporters;

/// <summary>Reads the results log and writes the report through every exporter (<see cref="ReportFiles"/>), and prints its summary.</summary>
public sealed class WriteReport : IntegrationTask
{
    [Required] public string ResultsFile { get; set; } = "";
    [Required] public string OutputDirectory { get; set; } = "";

    /// <summary>Where the dated copy of results.json goes (HistoryDir); empty: "history" beside <see cref="OutputDirectory"/>.</summary>
    public string? HistoryDirectory { get; set; }

    /// <summary>Properties that shaped the run (item spec = name, metadata Value), recorded with the results.</summary>
    public ITaskItem[] RunProperties { get; set; } = [];

    /// <summary>The transports' definitions: their Encoding metadata names the encoding column.</summary>
    public ITaskItem[] Transports { get; set; } = [];

    /// <summary>The calibration's readings (CalibrateNoise), when the run made them.</summary>
    public string? NoiseFile { get; set; }

    /// <summary>Transports that did not run (item spec = name; metadata Reason, Fix, SeriesSeconds, Replacement).</summary>
    public ITaskItem[] NotRun { get; set; } = [];

    /// <summary>The series' 2014 figures (item spec = the series' name for the method; metadata Seconds, Transport).</summary>
    public ITaskItem[] Series { get; set; } = [];

    /// <summary>What a family says about its rows under this run's settings (item spec = a title, metadata Text), listed with the environment.</summary>
    public ITaskItem[] Notes { get; set; } = [];

    /// <summary>The repository, for the commit recorded with the results.</summary>
    public string? RepositoryRoot { get; set; }

    /// <summary>The server database, for its version and the data set's fingerprint (skipped when empty).</summary>
    public string ServerProvider { get; set; } = "Sqlite";

    /// <summary>Add the diagnostics of this machine's noise to the report (<see cref="ReportOptions.Diagnostics"/>).</summary>
    public bool NoiseDiagnostics { get; set; }
    public string? ServerConnString { get; set; }

    /// <summary>The coded errors of RunAll's transports (<see cref="RunFailures"/>), reported as failed.</summary>
    public string? FailureLog { get; set; }

    /// <summary>
    /// The results (runs.jsonl) of several client machines against one server, reported together with <see cref="ResultsFile"/>'s:
    /// each machine's runs of the same StartAt merge into one (<see cref="ClientMachineRuns"/>).
    /// </summary>
    public string[] MergeRuns { get; set; } = [];

    /// <summary>The results database (<see cref="ResultsHistory"/>): the RunAll its runs began there is finished with this report's environment.</summary>
    public string HistoryProvider { get; set; } = "Sqlite";
    public string HistoryConnString { get; set; } = "";

    [Output] public string[] Files { get; private set; } = [];

    /// <summary>How many earlier RunAlls the report's explorer holds.</summary>
    private const int MaxEarlierRunAlls = 20;

    /// <summary>The RunAll's id in the results database (0 when this report's runs are not there: a report of an earlier run's log).</summary>
    [Output] public long HistoryId { get; private set; }

    /// <summary>How often the reference ran when ReferenceEvery put it between the rounds' other runs; empty when it ran once a round.</summary>
    internal static string ReferenceRunsBetween(IReadOnlyList<Measurement> measurements)
    {
        var measured = measurements.Where(m => !m.Warmup).GroupBy(m => (m.Transport, m.Records, m.Clients, Kind: RowKey.KindOf(m))).ToList();
        var rounds = measured.Where(g => g.Key.Kind != RunKind.Reference).Select(g => g.Count()).DefaultIfEmpty().Max();
        var extra = measured.Where(g => g.Key.Kind == RunKind.Reference && g.Count() > rounds).ToList();
        if (rounds == 0 || extra.Count == 0)
            return "";
        var (fewest, most) = (extra.Min(g => g.Count()), extra.Max(g => g.Count()));
        return string.Join(", ", extra.Select(g => g.Key.Transport).Distinct()) + string.Create(System.Globalization.CultureInfo.InvariantCulture,
            $" also ran between the rounds' other runs ({(fewest == most ? $"{most}" : $"{fewest}–{most}")} runs against {rounds} rounds, ReferenceEvery), and each run's paired ratio is to its run nearest in time");
    }

    protected override async Task ExecuteAsync(CancellationToken cancellationToken)
    {
        // Transports' runs, a lab's results, or both.
        var labSections = ReportSections.In(OutputDirectory);
        var labs = labSections.Count > 0;
        var failed = FailedEntry.From(RunFailures.Read(FailureLog));
        var measurements = File.Exists(ResultsFile) || (!labs && failed.Count == 0 && MergeRuns.Length == 0) ? MeasurementLog.Read(ResultsFile) : [];
        if (MergeRuns.Length > 0)
            measurements = ClientMachineRuns.Merge(measurements.Concat(MergeRuns.SelectMany(f => f.Split('+')).Where(f => f.Length > 0).SelectMany(MeasurementLog.Read)));
        if (measurements.Count == 0 && !labs && failed.Count == 0)
            throw new IntegrationException(ErrorCodes.ResultsUnreadable, $"{ResultsFile} holds no measurements.");
        var environment = RunEnvironment.Describe(RepositoryRoot);
        if (!string.IsNullOrEmpty(ServerConnString) && measurements.Count > 0)
        {
            var server = Data.Database.Create(ServerProvider, ServerConnString);
            environment["Database"] = await RunEnvironment.DatabaseVersionAsync(server, cancellationToken).ConfigureAwait(false);
            environment["Data set"] = await RunEnvironment.FingerprintAsync(server, measurements.Max(m => m.Records), cancellationToken)
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
                        + $" in batches of {string.Join(", ", g.Select(m => m.BatchSize).Distinct().Order().Select(b => b.ToString("N0", System.Globalization.CultureInfo.InvariantCulture)))}"));
        }
        foreach (var property in RunProperties)
            environment[property.ItemSpec] = property.GetMetadata("Value");
        // As measured, not as the properties of this build say (-t:Report over an earlier run's log has today's defaults).
        if (measurements.Count > 0)
        {
            environment["Repetitions"] = MeasuredRepetitions(measurements);
            var warmups = measurements.Where(m => m.Warmup).GroupBy(m => (m.Transport, m.Records, m.BatchSize, m.Clients)).Select(g => g.Count()).Distinct().Order().ToList();
            environment["Warmup"] = warmups.Count == 0 ? "false" : $"{string.Join(", ", warmups)} run(s) a transport before its measured ones";
            var seeds = measurements.Select(m => m.RoundSeed).Distinct().ToList();
            environment["Repetition order"] = seeds is [{ } seed]
                ? $"interleaved: round r of every transport before round r+1 of any, each round's order shuffled (seed {seed.ToString(System.Globalization.CultureInfo.InvariantCulture)})"
                : seeds is [null] ? "by transport: every repetition of one transport, then the next" : "mixed (runs of several RunAlls)";
            if (seeds is [not null] && ReferenceRunsBetween(measurements) is { Length: > 0 } between)
                environment["Repetition order"] += "; " + between;
            // StopAtPrecision: what was asked and what the rounds reached, judged again on the runs as recorded.
            if (environment.TryGetValue("StopAtPrecision", out var asked))
                environment["StopAtPrecision"] = RatioPrecision.TryParsePercent(asked, out var precision) ? RatioPrecision.ReportLine(precision, measurements) : asked;
        }
        foreach (var note in Notes)
            environment[$"Note ({note.ItemSpec})"] = note.GetMetadata("Text");
        if (measurements.Count > 0)
            environment["ServerWork"] = string.Join(", ", measurements.GroupBy(m => m.ServerReads)
                .Select(g => $"{g.Key} ({ReportContent.ServerWorkLabel(g.Key)}: {string.Join(", ", g.Select(m => m.Transport).Distinct())})"));
        var settings = (BuildEngine as IBuildEngine6)?.GetGlobalProperties() ?? new Dictionary<string, string>();
        var notRun = NotRun.Select(i => new NotRunEntry(i.ItemSpec, i.GetMetadata("Reason"), i.GetMetadata("Fix"),
            i.GetMetadata("SeriesSeconds"), i.GetMetadata("Replacement"))
        {
            // Left out of a TLS pass: its key says so (on a Tls=false+true axis the build's own setting names both).
            Key = RunKey.Asked(i.ItemSpec, settings) is var key && i.GetMetadata("Tls") == "true" ? key with { Tls = true } : key,
            Cap = int.TryParse(i.GetMetadata("CappedAt"), System.Globalization.CultureInfo.InvariantCulture, out var cap) ? (i.GetMetadata("CappedTransport"), cap) : null,
        }).ToList();
        var series = Series.Select(i => new SeriesEntry(i.ItemSpec,
            double.Parse(i.GetMetadata("Seconds"), System.Globalization.CultureInfo.InvariantCulture), i.GetMetadata("Transport"))).ToList();
        var noise = MachineNoise.Read(NoiseFile);
        var encodings = Transports.Select(TransportDefinition.From).Where(t => t.Encoding.Length > 0).ToDictionary(t => t.Name, t => t.Encoding, StringComparer.Ordinal);
        var model = ReportModel.Of(measurements, environment,
            new ReportOptions { NotRun = notRun, Series = series, Failed = failed, Noise = noise, Encodings = encodings, Diagnostics = NoiseDiagnostics }, labSections);
        var historyId = HistoryConnString.Length > 0 ? RunState.For(BuildEngine, ResultsFile).HistoryId : null;
        ResultsHistory? history = null;
        try
        {
            // Only a RunAll this build recorded there has anything to finish (its runs warned already if the setting is unusable).
            history = historyId is null ? null : ResultsHistory.Open(HistoryProvider, HistoryConnString);
        }
        catch (IntegrationException e)
        {
            Log.LogWarning(null, e.Code, null, null, 0, 0, 0, 0, "The report is written without the results database: {0}", e.Message);
        }
        if (history is not null && historyId is not null)
        {
            // The explorer follows each run key across the RunAlls before this one (the latest few: the page stays light).
            try
            {
                model = model with
                {
                    RunAllId = historyId,
                    History = [.. (await history.EarlierAsync(historyId, MaxEarlierRunAlls, cancellationToken).ConfigureAwait(false)).Select(e => HistoryRunAll.From(e.Entry, e.Results))],
                };
            }
            catch (IntegrationException e)
            {
                Log.LogWarning(null, e.Code, null, null, 0, 0, 0, 0, "The report's explorer holds this RunAll alone: {0}", e.Message);
            }
        }
        Files = [.. ReportFiles.Write(OutputDirectory, model, HistoryDirectory)];
        if (history is not null && historyId is { } id)
        {
            try
            {
                await history.FinishAsync(id, environment, RunHistory.Settings(settings), DateTimeOffset.UtcNow, cancellationToken).ConfigureAwait(false);
                HistoryId = id;
                Log.LogMessage(MessageImportance.High, "History: RunAll {0} in {1} (compare it with the previous one like it: dotnet msbuild build.proj -t:Compare).", id,
                    history.Database.Describe());
            }
            catch (IntegrationException e)
            {
                Log.LogWarning(null, e.Code, null, null, 0, 0, 0, 0, "The report is written; the results database keeps RunAll {0} as not finished: {1}", id, e.Message);
            }
        }
        foreach (var entry in notRun)
            Log.LogMessage(MessageImportance.High, "Not run: {0}: {1}{2}", entry.Transport, entry.Reason,
                entry.Fix.Length > 0 ? $" Fix: {entry.Fix}" : "");
        // The build log's summary, from the report's own model.
        var completed = model.Measurements;
        Log.LogMessage(MessageImportance.High, "Results ({0} verified runs{1}):{2}{3}", completed.Count,
            completed.Count < measurements.Count ? $", {measurements.Count - completed.Count} failed cleanly under a fault" : "", Environment.NewLine,
            ReportContent.ConsoleSummary(model.Summaries) + ReportContent.BatchSweep(completed) + FaultTable.Markdown(model.Faults));
        if (environment.TryGetValue("StopAtPrecision", out var judged))
            Log.LogMessage(MessageImportance.High, "StopAtPrecision: {0}.", judged);
        foreach (var entry in failed)
            Log.LogMessage(MessageImportance.High, "Failed: {0} at {1} records: {2}: {3}", entry.Transport, entry.RecordsText, entry.Code, entry.Message);
        Log.LogMessage(MessageImportance.High, "Report: {0}", string.Join(", ", Files));
    }

    /// <summary>
    /// How many measured runs each row had, as a list of the distinct counts ("10", or "5, 10"): a row is what the tables show
    /// as one (<see cref="RowKey"/>) at one record count.
    /// </summary>
    internal static string MeasuredRepetitions(IEnumerable<Measurement> measurements) =>
        string.Join(", ", RowKey.Of(measurements.Where(m => !m.Warmup)).GroupBy(k => (k.Key, k.Run.Records))
            .Select(g => g.Count()).Distinct().Order());
}
