using IntegrationTasks.Transfer;

namespace IntegrationTasks.Results;

/// <summary>
/// The report's one model: the statistics, the headline, the tables, the curves and the sections, each computed once from the runs.
/// Every exporter (JSON, CSV, Markdown, HTML) renders this; none computes a figure of its own.
/// </summary>
/// <param name="AllRuns">Every run recorded, those that failed cleanly under an injected fault included.</param>
/// <param name="Measurements">The runs that completed: the only ones in a statistic.</param>
/// <param name="Labs">The labs' results found beside the results, each with the section that renders it.</param>
public sealed record ReportModel(
    IReadOnlyDictionary<string, string> Environment,
    IReadOnlyList<Measurement> AllRuns,
    IReadOnlyList<Measurement> Measurements,
    IReadOnlyList<TransportSummary> Summaries,
    IReadOnlyList<string> Headline,
    IReadOnlyList<FailedEntry> Failed,
    IReadOnlyList<NotRunEntry> NotRun,
    IReadOnlyList<FaultRow> Faults,
    IReadOnlyList<NoiseReading> Noise,
    ReportDocument Tables,
    ReportDocument SeriesSection,
    ReportDocument Sweeps,
    IReadOnlyList<BatchSweep> BatchSweeps,
    IReadOnlyList<LatencyCurve> LatencyCurves,
    IReadOnlyList<LoadCurve> LoadCurves,
    IReadOnlyList<LabSection> Labs,
    bool Diagnostics)
{
    /// <summary>This report's RunAll's id in the results database; null when it is not in one.</summary>
    public long? RunAllId { get; init; }

    /// <summary>Earlier RunAlls from the results database, for the explorer's history.</summary>
    public IReadOnlyList<HistoryRunAll> History { get; init; } = [];

    public static ReportModel Of(IReadOnlyList<Measurement> allRuns, IReadOnlyDictionary<string, string> environment, ReportOptions options,
        IReadOnlyList<LabSection> labs)
    {
        var measurements = allRuns.Where(m => m.Completed).ToList();
        var summaries = ReportContent.Summarise(measurements)
            .Select(s => options.Encodings.GetValueOrDefault(s.Key.Transport) is { Length: > 0 } encoding ? s with { Encoding = encoding } : s).ToList();
        var faults = FaultRuns.Rows(allRuns);
        var (tables, series, sweeps) = measurements.Count > 0
            ? (ReportContent.Tables(summaries, environment), ReportContent.SeriesSection(summaries, options.Series),
                ScalingReport.Section(ReportContent.Labelled(measurements)).Append(ReportContent.BatchSweepSection(measurements)))
            : (new ReportDocument(), new ReportDocument(), new ReportDocument());
        return new ReportModel(environment, allRuns, measurements, summaries, ReportHeadline.Lines(summaries, options.Failed, options.NotRun, faults),
            options.Failed, options.NotRun, faults, options.Noise, tables, series, sweeps, ReportContent.Sweeps(measurements),
            LatencySweep.Curves(measurements), ClientLoad.Curves(measurements), labs, options.Diagnostics);
    }
}

/// <summary>An earlier RunAll as the report's explorer shows it beside this one: its id, start, commit and rows.</summary>
public sealed record HistoryRunAll(string Id, string Started, string Commit, IReadOnlyList<TransportSummary> Summaries)
{
    public static HistoryRunAll From(HistoryEntry entry, ResultsFile results) =>
        new(entry.Id.ToString(System.Globalization.CultureInfo.InvariantCulture), entry.StartedUtc.ToString("yyyy-MM-dd HH:mm:ss", System.Globalization.CultureInfo.InvariantCulture),
            entry.Commit, IntegrationTasks.Results.Summaries.Of(results.Measurements.Where(m => m.Completed).ToList()));
}
