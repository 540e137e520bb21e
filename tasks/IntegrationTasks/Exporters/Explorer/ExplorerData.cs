using System.Globalization;
using System.Text.Json;
using System.Text.Json.Serialization;
using IntegrationTasks.Results;

namespace IntegrationTasks.Exporters;

/// <summary>
/// What the report's explorer reads: one row a RunAll and run key (every field of the key, and the RunAll's id as one more), with
/// its runs' count, mean and standard deviation of the time, and the measures a chart can show. Embedded in report.html as JSON.
/// </summary>
public static class ExplorerData
{
    /// <summary>The key fields the explorer filters by: the RunAll, then every field of <see cref="RunKey"/>.</summary>
    public static IReadOnlyList<string> Fields { get; } = ["runAll", .. RunKey.Fields.Select(f => f.Id)];

    private static readonly JsonSerializerOptions Options = new() { DefaultIgnoreCondition = JsonIgnoreCondition.Never };

    public sealed record Row(
        [property: JsonPropertyName("key")] IReadOnlyDictionary<string, string> Key,
        [property: JsonPropertyName("n")] int Runs,
        [property: JsonPropertyName("mean")] double Mean,
        [property: JsonPropertyName("sd")] double StdDev,
        [property: JsonPropertyName("recordsPerSecond")] double RecordsPerSecond,
        [property: JsonPropertyName("mbPerSecond")] double? MegabytesPerSecond,
        [property: JsonPropertyName("pairedRatio")] double? PairedRatio,
        [property: JsonPropertyName("ratioOfMeans")] double? RatioOfMeans,
        [property: JsonPropertyName("p50")] double? P50Ms,
        [property: JsonPropertyName("p90")] double? P90Ms,
        [property: JsonPropertyName("p99")] double? P99Ms,
        [property: JsonPropertyName("clientPeakMB")] double? ClientPeakMegabytes,
        [property: JsonPropertyName("clientAllocatedMB")] double? ClientAllocatedMegabytes,
        [property: JsonPropertyName("clientGcPauseMs")] double? ClientGcPauseMs);

    public static IReadOnlyList<Row> Rows(IReadOnlyList<HistoryRunAll> runAlls) =>
    [
        .. runAlls.SelectMany(runAll => runAll.Summaries.Select(s =>
        {
            var key = s.RunKey ?? RunKey.Named(s.Key.Transport, s.Records);
            var fields = new Dictionary<string, string>(StringComparer.Ordinal) { ["runAll"] = runAll.Id };
            foreach (var (id, text) in RunKey.Fields)
                fields[id] = text(key);
            return new Row(fields, s.Seconds.Count, Finite(s.Seconds.Mean), Finite(s.Seconds.StdDev), Finite(s.MeanRecordsPerSecond),
                s.MeanBytesPerRecord is { } bytes ? s.MeanRecordsPerSecond * bytes / 1e6 : null,
                s.Key.IsLimit ? null : s.PairedRatioToPipelined?.Mean, s.Key.IsLimit ? null : s.RatioToPipelined,
                s.BatchLatency?.P50Ms, s.BatchLatency?.P90Ms, s.BatchLatency?.P99Ms,
                // A client inside the build's process has the build's peak: shown only where each had its own.
                s.ClientOwnProcess && s.MaxClientPeakBytes > 0 ? s.MaxClientPeakBytes / 1048576.0 : null,
                s.Costs is { } costs ? costs.ClientAllocatedBytesPerRecord * s.Records / 1048576.0 : null, s.Costs?.ClientGcPauseMsPerRun);
        })),
    ];

    private static double Finite(double value) => double.IsFinite(value) ? value : 0;

    /// <summary>The JSON the page embeds (System.Text.Json escapes '&lt;', so it cannot close its script element).</summary>
    public static string Json(IReadOnlyList<HistoryRunAll> runAlls) => JsonSerializer.Serialize(new
    {
        fields = Fields,
        runAlls = runAlls.Select(r => new { id = r.Id, started = r.Started, commit = r.Commit }),
        // The page opens on the main comparison: the latest RunAll's largest size that most transports ran at.
        initial = runAlls.Count == 0 || runAlls[^1].Summaries.Count == 0 ? new Dictionary<string, string[]>()
            : new Dictionary<string, string[]> { ["records"] = [ReportHeadline.Main(runAlls[^1].Summaries).Key.Records.ToString(CultureInfo.InvariantCulture)] },
        rows = Rows(runAlls),
    }, Options);

    /// <summary>The report's RunAlls: the earlier ones from the results database, then its own.</summary>
    public static IReadOnlyList<HistoryRunAll> Of(ReportModel model) =>
    [
        .. model.History,
        new(model.RunAllId?.ToString(CultureInfo.InvariantCulture) ?? "this run", model.Environment.GetValueOrDefault("Date (UTC)", ""),
            model.Environment.GetValueOrDefault("Git commit", ""), model.Summaries),
    ];
}
