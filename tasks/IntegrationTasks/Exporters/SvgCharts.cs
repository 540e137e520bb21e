using System.Globalization;
using System.Net;
using System.Text;
using IntegrationTasks.Results;

namespace IntegrationTasks.Exporters;

/// <summary>report.html's drawing of a document's charts, as inline SVG.</summary>
public sealed class SvgCharts : IReportCharts
{
    private static readonly CultureInfo Invariant = CultureInfo.InvariantCulture;

    public static SvgCharts Instance { get; } = new();

    public string Bars(ReportBarChart chart) => HtmlReport.BarChart(chart.Id, chart.Title, chart.Bars, chart.Format);

    /// <summary>One polyline a series over a shared x axis from 0, the largest y in the title, the series named at the right.</summary>
    public string Lines(ReportLineChart chart)
    {
        const int left = 60, width = 640, height = 200, top = 30;
        var points = chart.Lines.SelectMany(l => l.Points).ToList();
        var maxX = Math.Max(double.Epsilon, points.Count > 0 ? points.Max(p => p.X) : 1);
        var maxY = Math.Max(1, points.Count > 0 ? points.Max(p => p.Y) : 1);
        string[] colours = ["#d0704a", "#4a7bd0", "#4ab07b"];
        var svg = new StringBuilder();
        svg.Append(Invariant, $"<figure><svg id=\"{chart.Id}\" class=\"chart\" width=\"{left + width + 240}\" height=\"{top + height + 30}\">");
        svg.Append(Invariant, $"<text x=\"0\" y=\"16\" font-weight=\"bold\">{WebUtility.HtmlEncode(chart.Title)} (max {maxY:F0})</text>");
        for (var i = 0; i < chart.Lines.Count; i++)
        {
            var line = string.Join(" ", chart.Lines[i].Points.Select(p => string.Create(Invariant, $"{left + p.X / maxX * width:F1},{top + height - p.Y / maxY * height:F1}")));
            svg.Append(Invariant, $"<polyline class=\"series\" fill=\"none\" stroke=\"{colours[i % 3]}\" stroke-width=\"2\" points=\"{line}\"/>");
            svg.Append(Invariant, $"<text x=\"{left + width + 12}\" y=\"{top + 14 + i * 16}\" fill=\"{colours[i % 3]}\">{WebUtility.HtmlEncode(chart.Lines[i].Name)}</text>");
        }
        svg.Append("</svg></figure>");
        return svg.ToString();
    }
}
