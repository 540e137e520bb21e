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
        var environment = await ReportEnvironment.DescribeAsync(measurements, RepositoryRoot, ServerProvider, ServerConnString,
            [.. RunProperties.Select(p => (p.ItemSpec, p.GetMetadata("Value")))], [.. Notes.Select(n => (n.ItemSpec, n.GetMetadata("Text")))],
            cancellationToken).ConfigureAwait(false);
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
}
