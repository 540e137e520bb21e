using System.Globalization;
using System.Net;
using System.Text;

namespace IntegrationTasks.Exporters;

/// <summary>
/// An inline SVG chart of lines on log–log axes (sizes and times that span orders of magnitude): a line per series, its points
/// with their tooltips, its name in the legend; a reference's line dashed grey.
/// </summary>
public static class LogLogChart
{
    private static readonly CultureInfo Invariant = CultureInfo.InvariantCulture;

    public sealed record Point(double X, double Y, string Tooltip);

    public sealed record Series(string Name, IReadOnlyList<Point> Points, bool Reference = false);

    private static readonly string[] Colours =
        ["#4a7bd0", "#d0704a", "#4ab07b", "#a04ad0", "#d0b04a", "#4ab0d0", "#d04a8a", "#7b7b7b", "#2f5d8a", "#8a5d2f", "#5d8a2f", "#8a2f5d"];

    /// <param name="ticks">The x axis's labelled values and their labels.</param>
    /// <param name="legend">The legend's width, in pixels, right of the plot.</param>
    public static string Render(string id, string title, IReadOnlyList<(double X, string Label)> ticks, IReadOnlyList<Series> series, int legend = 260)
    {
        const int left = 60, width = 640, height = 320, top = 30;
        var points = series.SelectMany(s => s.Points).ToList();
        var (xMin, xMax) = (Math.Log10(points.Min(p => p.X)), Math.Log10(points.Max(p => p.X)));
        var (yMin, yMax) = (Math.Log10(points.Min(p => p.Y)), Math.Log10(points.Max(p => p.Y)));
        if (xMax == xMin) xMax = xMin + 1;
        if (yMax == yMin) yMax = yMin + 1;
        double X(double x) => left + (Math.Log10(x) - xMin) / (xMax - xMin) * width;
        double Y(double y) => top + height - (Math.Log10(y) - yMin) / (yMax - yMin) * height;
        var svg = new StringBuilder();
        svg.Append(Invariant, $"<figure><svg id=\"{id}\" class=\"chart\" role=\"img\" width=\"{left + width + legend}\" height=\"{top + height + 40}\">");
        svg.Append(Invariant, $"<text x=\"0\" y=\"16\" font-weight=\"bold\">{Encode(title)}</text>");
        svg.Append(Invariant, $"<line x1=\"{left}\" y1=\"{top + height}\" x2=\"{left + width}\" y2=\"{top + height}\" stroke=\"#888\"/>");
        svg.Append(Invariant, $"<line x1=\"{left}\" y1=\"{top}\" x2=\"{left}\" y2=\"{top + height}\" stroke=\"#888\"/>");
        foreach (var (x, label) in ticks)
            svg.Append(Invariant, $"<text x=\"{X(x):F1}\" y=\"{top + height + 16}\" text-anchor=\"middle\">{Encode(label)}</text>");
        for (var i = 0; i < series.Count; i++)
        {
            var (name, own, reference) = (series[i].Name, series[i].Points, series[i].Reference);
            var colour = reference ? "#9aa5b1" : Colours[i % Colours.Length];
            var line = string.Join(" ", own.OrderBy(p => p.X).Select(p => string.Create(Invariant, $"{X(p.X):F1},{Y(p.Y):F1}")));
            svg.Append(Invariant, $"<polyline class=\"series\" data-transport=\"{Encode(name)}\" fill=\"none\" stroke=\"{colour}\" stroke-width=\"2\"{(reference ? " stroke-dasharray=\"6 4\"" : "")} points=\"{line}\"/>");
            foreach (var p in own)
                svg.Append(Invariant, $"<circle cx=\"{X(p.X):F1}\" cy=\"{Y(p.Y):F1}\" r=\"3\" fill=\"{colour}\"><title>{Encode(p.Tooltip)}</title></circle>");
            svg.Append(Invariant, $"<text x=\"{left + width + 14}\" y=\"{top + 12 + i * 16}\" fill=\"{colour}\">{Encode(name)}</text>");
        }
        svg.Append("</svg></figure>");
        return svg.ToString();
    }

    private static string Encode(string text) => WebUtility.HtmlEncode(text);
}
