using IntegrationTasks.Results;
using IntegrationTasks.Transfer;

namespace IntegrationTasks.Exporters;

/// <summary>
/// Writes the report: the model made once from the runs, then each exporter's file, and results.json again under a dated name in the
/// history folder (one for every results folder: RunAll's, the sweeps', Load's), named after the results folder.
/// </summary>
public static class ReportFiles
{
    private static readonly JsonExporter Json = new();

    public static IReadOnlyList<IReportExporter> Exporters { get; } = [Json, new CsvExporter(), new MarkdownExporter(), new HtmlExporter()];

    /// <summary>The report of these runs, with the labs' sections found in <paramref name="directory"/>.</summary>
    public static IReadOnlyList<string> Write(string directory, IReadOnlyList<Measurement> allRuns, IReadOnlyDictionary<string, string> environment,
        ReportOptions? options = null, string? historyDirectory = null) =>
        Write(directory, ReportModel.Of(allRuns, environment, options ?? new ReportOptions(), ReportSections.In(directory)), historyDirectory);

    /// <summary>Where the dated copies go when no history folder is named: "history" beside the results folder.</summary>
    public static string DefaultHistory(string directory) =>
        Path.Combine(Path.GetDirectoryName(Path.TrimEndingDirectorySeparator(Path.GetFullPath(directory)))!, "history");

    /// <returns>The files written: each exporter's, then the dated copy of results.json (kept so a later run can be compared with it, -t:Compare).</returns>
    public static IReadOnlyList<string> Write(string directory, ReportModel model, string? historyDirectory = null)
    {
        Directory.CreateDirectory(directory);
        var files = new List<string>();
        foreach (var exporter in Exporters)
        {
            var file = Path.Combine(directory, exporter.FileName);
            File.WriteAllText(file, exporter.Render(model));
            files.Add(file);
        }
        var history = string.IsNullOrEmpty(historyDirectory) ? DefaultHistory(directory) : historyDirectory;
        Directory.CreateDirectory(history);
        var dated = Path.Combine(history, $"{RunState.HistoryName(directory)}-{DateTime.UtcNow:yyyyMMdd-HHmmss}.json");
        File.Copy(Path.Combine(directory, Json.FileName), dated, overwrite: true);
        files.Add(dated);
        return files;
    }
}
