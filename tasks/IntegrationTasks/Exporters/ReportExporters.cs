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

/// <summary>results.md: the findings first, then the environment, the tables and every section; the labs' sections last.</summary>
public sealed class MarkdownExporter : IReportExporter
{
    public string FileName => "results.md";

    public string Render(ReportModel model)
    {
        var document = new ReportDocument().AddHeading(1, ReportContent.Title);
        if (model.Headline.Count > 0)
            document.AddHeading(2, "Findings").AddBullets(model.Headline);
        var text = model.Measurements.Count == 0 ? document.Markdown()
            : document.AddBullets(model.Environment.Select(e => $"{e.Key}: {e.Value}"))
                  .Append(model.Tables).Append(ReportContent.NotRunSection(model.NotRun)).Append(model.SeriesSection).Append(model.Sweeps).Markdown()
              + LatencySweepReport.Markdown(model.LatencyCurves) + LoadReport.Markdown(model.LoadCurves, Environment.ProcessorCount)
              + FaultTable.Markdown(model.Faults) + NoiseReport.Markdown(model.Noise, model.Summaries, model.Measurements, model.Diagnostics);
        return text + ReportContent.FailedSection(model.Failed).Markdown(before: text) + string.Concat(model.Labs.Select(l => l.Markdown()));
    }
}

/// <summary>report.html: the same blocks as results.md with the charts; the not-run table has a section of its own there.</summary>
public sealed class HtmlExporter : IReportExporter
{
    public string FileName => "report.html";

    public string Render(ReportModel model) => HtmlReport.Render(model.Summaries, model.Environment, model.NotRun,
        new ReportDocument().Append(model.Tables).Append(model.SeriesSection).Append(model.Sweeps), model.BatchSweeps,
        LatencySweepReport.Html(model.LatencyCurves) + LoadReport.Html(model.LoadCurves, Environment.ProcessorCount) + FaultTable.Html(model.Faults)
        + NoiseReport.Html(model.Noise) + string.Concat(model.Labs.Select(l => l.Html())), model.Failed, model.Headline,
        model.Summaries.Count > 0 ? ExplorerHtml.Section(ExplorerData.Json(ExplorerData.Of(model))) : "");
}
