using System.Globalization;
using System.Text;
using IntegrationTasks.Results;

namespace IntegrationTasks.Exporters;

public static class LatencySweepReport
{
    private static readonly CultureInfo Invariant = CultureInfo.InvariantCulture;

    /// <summary>The sweep's columns: a transport's mean at each added round trip measured, then its slope.</summary>
    public static IReadOnlyList<ReportColumn<LatencyCurve>> Columns(IReadOnlyList<double> latencies) =>
    [
        new("transport", "Transport", c => c.Transport, Numeric: false),
        .. latencies.Select(l => new ReportColumn<LatencyCurve>(string.Create(Invariant, $"rtt{l:0.###}ms"), string.Create(Invariant, $"{l:0.###} ms"),
            c => c.Points.FirstOrDefault(p => p.LatencyMs == l) is { } point ? point.Seconds.MeanWithInterval() : "–")),
        new("secondsPerMs", "Seconds per ms of round trip", c => c.SecondsPerMs.ToString("F4", Invariant)),
        // A slope within noise of zero reads as 0, not "-0".
        new("sequentialRoundTrips", "Round trips waited for in sequence",
            c => (Math.Abs(c.SequentialRoundTrips) < 0.5 ? 0 : c.SequentialRoundTrips).ToString("N0", Invariant)),
    ];

    public static string Markdown(IReadOnlyList<LatencyCurve> curves)
    {
        if (curves.Count == 0)
            return "";
        var latencies = curves.SelectMany(c => c.Points.Select(p => p.LatencyMs)).Distinct().Order().ToList();
        var md = new StringBuilder(string.Create(Invariant, $"\n## Latency sweep ({curves[0].Records:N0} records; mean seconds at each added round trip)\n\n"));
        md.Append(ReportTable.Markdown(Columns(latencies), curves));
        md.Append("""

            How to read it: a transfer that waits for each answer before it asks again pays one round trip per call, so its
            time grows by (calls per transfer × round trip) — its slope, read as round trips waited for in sequence, is about its
            number of calls. A pipelined transport keeps several requests in flight, so it waits for only a few round trips in
            all, however many batches it moves, until the link's bandwidth or the database work is what limits it.

            """);
        return md.ToString();
    }

    /// <summary>Time against round trip, one line per transport (linear axes: the slopes are the point).</summary>
    public static string Html(IReadOnlyList<LatencyCurve> curves)
    {
        if (curves.Count == 0)
            return "";
        const int left = 60, width = 640, height = 320, top = 30, legend = 260;
        var maxX = Math.Max(1, curves.Max(c => c.Points.Max(p => p.LatencyMs)));
        var maxY = Math.Max(1e-3, curves.Max(c => c.Points.Max(p => p.Seconds.Mean)));
        double X(double ms) => left + ms / maxX * width;
        double Y(double seconds) => top + height - seconds / maxY * height;
        string[] colours = ["#4a7bd0", "#d0704a", "#4ab07b", "#a04ad0", "#d0b04a", "#4ab0d0", "#d04a8a", "#7b7b7b"];
        var svg = new StringBuilder("<h2>Latency sweep</h2>");
        svg.Append(Invariant, $"<figure><svg id=\"latency-sweep\" class=\"chart\" role=\"img\" width=\"{left + width + legend}\" height=\"{top + height + 40}\">");
        svg.Append("<text x=\"0\" y=\"16\" font-weight=\"bold\">Mean time (s) against added round trip (ms)</text>");
        svg.Append(Invariant, $"<line x1=\"{left}\" y1=\"{top + height}\" x2=\"{left + width}\" y2=\"{top + height}\" stroke=\"#888\"/>");
        svg.Append(Invariant, $"<line x1=\"{left}\" y1=\"{top}\" x2=\"{left}\" y2=\"{top + height}\" stroke=\"#888\"/>");
        foreach (var ms in curves.SelectMany(c => c.Points.Select(p => p.LatencyMs)).Distinct())
            svg.Append(Invariant, $"<text x=\"{X(ms):F1}\" y=\"{top + height + 16}\" text-anchor=\"middle\">{ms:0.###}</text>");
        svg.Append(Invariant, $"<text x=\"{left - 6}\" y=\"{top + 10}\" text-anchor=\"end\">{maxY:F1}</text>");
        for (var i = 0; i < curves.Count; i++)
        {
            var colour = colours[i % colours.Length];
            var points = string.Join(" ", curves[i].Points.Select(p => string.Create(Invariant, $"{X(p.LatencyMs):F1},{Y(p.Seconds.Mean):F1}")));
            svg.Append(Invariant, $"<polyline data-transport=\"{System.Net.WebUtility.HtmlEncode(curves[i].Transport)}\" fill=\"none\" stroke=\"{colour}\" stroke-width=\"2\" points=\"{points}\"/>");
            svg.Append(Invariant, $"<text x=\"{left + width + 14}\" y=\"{top + 12 + i * 16}\" fill=\"{colour}\">{System.Net.WebUtility.HtmlEncode(curves[i].Transport)}</text>");
        }
        svg.Append("</svg></figure>");
        return svg.ToString();
    }
}
