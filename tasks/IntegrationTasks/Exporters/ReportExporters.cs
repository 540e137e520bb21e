using System.Text.Json;
using IntegrationTasks.Results;
using IntegrationTasks.Transfer;

namespace IntegrationTasks.Exporters;

/// <summary>results.json: the environment, the summaries, what failed or was not run, the fault table, the noise readings and every run.</summary>
public sealed class JsonExporter : IReportExporter
{
    private static readonly JsonSerializerOptions Options = new(MeasurementLog.Json) { WriteIndented = true };

    public string FileName => "results.json";

    public string Render(ReportModel model) => JsonSerializer.Serialize(new
    {
        environment = model.Environment, summaries = model.Summaries, failed = model.Failed, notRun = model.NotRun, faults = model.Faults,
        noise = model.Noise, measurements = model.AllRuns,
    }, Options);
}

/// <summary>results.csv: every run, then every failure and every transport not run, so nothing asked for is missing.</summary>
public sealed class CsvExporter : IReportExporter
{
    public string FileName => "results.csv";

    public string Render(ReportModel model) => ReportContent.Csv(model.AllRuns, model.Failed, model.NotRun);
}

/// <summary>results.md: every section of <see cref="ReportOutline"/> in its order, as Markdown.</summary>
public sealed class MarkdownExporter : IReportExporter
{
    public string FileName => "results.md";

    public string Render(ReportModel model) => ReportOutline.Markdown(model);
}

/// <summary>report.html: every section of <see cref="ReportOutline"/> in its order, with the charts and the explorer.</summary>
public sealed class HtmlExporter : IReportExporter
{
    public string FileName => "report.html";

    public string Render(ReportModel model) => ReportOutline.Html(model);
}
