using IntegrationTasks.Results;

namespace IntegrationTasks.Exporters;

/// <summary>
/// Every section of the report, in the one order both documents show them: what was found and what failed first, then the tables
/// and charts, the sweeps, latency, load, faults, the machine's noise and the labs, then every figure, what was not run, and the
/// environment last. Each says how it reads in results.md and in report.html ("" where that document has none of it); the two
/// exporters walk this list and nothing else.
/// </summary>
public static class ReportOutline
{
    /// <param name="Markdown">The section in results.md, given the text before it (its spacing follows it).</param>
    public sealed record Section(string Name, Func<ReportModel, string, string> Markdown, Func<ReportModel, string> Html);

    /// <summary>results.md shows a run's sections only when it measured something; a lab's or a failure's report holds those alone.</summary>
    private static Func<ReportModel, string, string> Measured(Func<ReportModel, string, string> markdown) =>
        (model, before) => model.Measurements.Count == 0 ? "" : markdown(model, before);

    private static readonly Func<ReportModel, string> NoHtml = _ => "";
    private static readonly Func<ReportModel, string, string> NoMarkdown = (_, _) => "";

    public static IReadOnlyList<Section> Sections { get; } =
    [
        new("Title", (_, before) => new ReportDocument().AddHeading(1, ReportContent.Title).Markdown(before), NoHtml),
        new("Findings", (model, before) => model.Headline.Count == 0 ? "" : new ReportDocument().AddHeading(2, "Findings").AddBullets(model.Headline).Markdown(before),
            model => HtmlReport.Findings(model.Headline)),
        new("Explorer", NoMarkdown, model => model.Summaries.Count > 0 ? ExplorerHtml.Section(ExplorerData.Json(ExplorerData.Of(model))) : ""),
        new("Failed", (model, before) => ReportContent.FailedSection(model.Failed).Markdown(before), model => HtmlReport.Failed(model.Failed)),
        new("Tables", Measured((model, before) => model.Tables.Markdown(before)), model => HtmlReport.Sizes(model.Summaries)),
        new("Sweeps", Measured((model, before) => model.Sweeps.Markdown(before)), model => HtmlReport.Sweeps(model.Summaries, model.BatchSweeps)),
        new("Latency", Measured((model, _) => LatencySweepReport.Markdown(model.LatencyCurves)), model => LatencySweepReport.Html(model.LatencyCurves)),
        new("Load", Measured((model, _) => LoadReport.Markdown(model.LoadCurves, Environment.ProcessorCount)),
            model => LoadReport.Html(model.LoadCurves, Environment.ProcessorCount)),
        new("Faults", Measured((model, _) => FaultTable.Markdown(model.Faults)), model => FaultTable.Html(model.Faults)),
        new("Noise", Measured((model, _) => NoiseReport.Markdown(model.Noise, model.Summaries, model.Measurements, model.Diagnostics)),
            model => NoiseReport.Html(model.Noise)),
        new("Labs", (model, before) => Labs(model).Markdown(before), model => Labs(model).Html(charts: SvgCharts.Instance)),
        // results.md has shown its tables and sweeps already: here, the series' figures; report.html puts every table under one heading.
        new("Figures", Measured((model, before) => model.SeriesSection.Markdown(before)),
            model => HtmlReport.AllFigures(new ReportDocument().Append(model.Tables).Append(model.SeriesSection).Append(model.Sweeps))),
        new("NotRun", Measured((model, before) => ReportContent.NotRunSection(model.NotRun).Markdown(before)), model => HtmlReport.NotRun(model.NotRun)),
        new("Environment", Measured((model, before) => new ReportDocument().AddHeading(2, "Environment").AddBullets(model.Environment.Select(e => $"{e.Key}: {e.Value}")).Markdown(before)),
            model => HtmlReport.Environment(model.Environment)),
    ];

    private static ReportDocument Labs(ReportModel model) => model.Labs.Aggregate(new ReportDocument(), (document, lab) => document.Append(lab.Document()));

    public static string Markdown(ReportModel model) => Sections.Aggregate("", (text, section) => text + section.Markdown(model, text));

    public static string Html(ReportModel model) => HtmlReport.Page(string.Concat(Sections.Select(section => section.Html(model))));
}
