using System.Globalization;
using System.Net;
using System.Text;
using IntegrationTasks.Results;

namespace IntegrationTasks.Exporters;

/// <summary>
/// report.html: one self-contained file (nothing asked of the network): the explorer (<see cref="ExplorerHtml"/>), inline SVG charts — mean time
/// with its 95% confidence interval per transport for each record count, throughput, peak memory —
/// then the tables, the transports not run here, and the series' 2014 figures for reference.
/// </summary>
public static class HtmlReport
{
    private static readonly CultureInfo Invariant = CultureInfo.InvariantCulture;

    /// <summary>The page around its sections: the head and its style, the title, then the sections as <see cref="ReportOutline"/> orders them.</summary>
    public static string Page(string sections) => """
        <!DOCTYPE html>
        <html lang="en"><head><meta charset="utf-8"><title>IntegrationTasks results</title>
        <style>
        body{font:14px/1.45 system-ui,sans-serif;margin:2em auto;max-width:1100px;padding:0 1em;color:#222}
        h1{font-size:1.6em}h2{font-size:1.25em;margin-top:2em;border-bottom:1px solid #ddd}
        table{border-collapse:collapse;margin:.5em 0 1.5em;font-size:12px}td,th{border:1px solid #ddd;padding:3px 6px;text-align:right}
        td:first-child,th:first-child{text-align:left}.env{columns:2;font-size:12px;color:#555}
        svg text{font:12px system-ui,sans-serif}.bar{fill:#4a7bd0}.baseline{fill:#9aa5b1}.ci{stroke:#222;stroke-width:1.5}
        .note{color:#666;font-size:12px}.bad td{background:#fde8e8}.wide{overflow-x:auto;max-width:100%}
        #findings li{margin:.2em 0}svg.chart{max-width:100%;height:auto}
        </style></head><body>
        <h1>IntegrationTasks results</h1>
        """ + sections + "</body></html>\n";

    public static string Findings(IReadOnlyList<string> headline)
    {
        if (headline.Count == 0)
            return "";
        var html = new StringBuilder("<section id=\"findings\"><h2>Findings</h2><ul>");
        foreach (var line in headline)
            html.Append(Invariant, $"<li>{Encode(line)}</li>");
        return html.Append("</ul></section>").ToString();
    }

    public static string Failed(IReadOnlyList<FailedEntry> failed) => failed.Count == 0 ? ""
        : "<h2>Failed</h2>" + ReportTable.Html(ReportColumns.Failed, failed, " id=\"failed\"", _ => " class=\"bad\"");

    /// <summary>Each record count's table and charts, the size most transports ran at first.</summary>
    public static string Sizes(IReadOnlyList<TransportSummary> summaries)
    {
        var html = new StringBuilder();
        foreach (var size in ReportHeadline.MainFirst(summaries))
        {
            var rows = size.ToList();
            var id = size.Key.Id;
            html.Append(Invariant, $"<h2>{size.Key.Heading}, {Encode(ReportContent.ServerWorkHeading(rows.Where(r => !r.IsPeer).ToList()))}</h2>");
            html.Append(MainTable(id, rows));
            html.Append(BarChart($"time-{id}", "Mean time (s), with 95% confidence interval — shorter is better", rows,
                r => r.Seconds.Mean, r => r.Seconds.HasInterval ? r.Seconds.Ci95 : 0, "F3"));
            var overheads = rows.Where(r => r.OverheadMicrosPerRecord is not null).ToList();
            if (overheads.Count > 0)
                html.Append(BarChart($"overhead-{id}", "Transport overhead per record (µs): mean − PipelinedCopy's, over records, with 95% interval", overheads,
                    r => r.OverheadMicrosPerRecord!.Value, r => r.Seconds.HasInterval ? r.OverheadCi95Micros ?? 0 : 0, "F2"));
            html.Append(BarChart($"throughput-{id}", "Records per second — longer is better", rows,
                r => r.MeanRecordsPerSecond, _ => 0, "N0"));
            var servers = rows.Where(r => r.MaxServerPeakBytes is > 0).ToList();
            if (servers.Count > 0)
                html.Append(BarChart($"memory-{id}", "Peak memory of the server process (MB)", servers, r => r.MaxServerPeakBytes!.Value / 1048576.0, _ => 0, "F0"));
            // A client inside the build's process has the build's peak, the same for every row: charted only where each had its own.
            var clients = rows.Where(r => r.ClientOwnProcess && r.MaxClientPeakBytes > 0).ToList();
            if (clients.Count > 0)
                html.Append(BarChart($"client-memory-{id}", "Peak memory of the client process (MB)", clients, r => r.MaxClientPeakBytes / 1048576.0, _ => 0, "F0"));
            var costed = rows.Where(r => r.Costs is not null).ToList();
            if (costed.Count > 0)
            {
                html.Append(BarChart($"cpu-{id}", "Client CPU per 1,000 records (ms)", costed, r => r.Costs!.ClientCpuMsPer1000, _ => 0, "F1"));
                var served = costed.Where(r => r.Costs!.ServerCpuMsPer1000 is not null).ToList();
                if (served.Count > 0)
                    html.Append(BarChart($"server-cpu-{id}", "Server CPU per 1,000 records (ms)", served, r => r.Costs!.ServerCpuMsPer1000!.Value, _ => 0, "F1"));
                html.Append(BarChart($"alloc-{id}", "Bytes the client allocated per record", costed, r => r.Costs!.ClientAllocatedBytesPerRecord, _ => 0, "N0"));
            }
            var timed = rows.Where(r => r.BatchLatency is not null).ToList();
            if (timed.Count > 0)
            {
                html.Append(BarChart($"p99-{id}", "Batch latency p99 (ms), request sent to committed — shorter is better", timed, r => r.BatchLatency!.P99Ms, _ => 0, "F1"));
                html.Append(ReportTable.Html(ReportColumns.BatchLatency, timed, " class=\"latency\""));
            }
        }
        return html.ToString();
    }

    /// <summary>The batch-size sweeps' charts, the payload chart and the scaling charts.</summary>
    public static string Sweeps(IReadOnlyList<TransportSummary> summaries, IReadOnlyList<BatchSweep> sweeps)
    {
        var html = new StringBuilder();
        foreach (var sweep in sweeps)
        {
            html.Append(Invariant, $"<h2>Batch-size sweep: {Encode(sweep.Transport)}, {sweep.Records:N0} records</h2>");
            html.Append(BarChart($"sweep-{sweep.Transport}-{sweep.Records}", "Mean time (s) by batch size, with 95% confidence interval", sweep.Rows,
                r => r.Seconds.Mean, r => r.Seconds.HasInterval ? r.Seconds.Ci95 : 0, "F3"));
        }

        if (PayloadChart(summaries) is { Length: > 0 } payloadChart)
            html.Append("<h2>Payload size</h2>").Append(payloadChart);

        // Scaling compares a transport's record counts at one payload: a chart for each payload run at two counts or more.
        var scaled = summaries.GroupBy(s => s.Key.PayloadBytes).Where(g => g.Select(s => s.Records).Distinct().Count() >= 2).ToList();
        if (scaled.Count > 0)
        {
            html.Append("<h2>Scaling</h2>");
            foreach (var payload in scaled)
                html.Append(LineChart([.. payload], payload.Key == 0 ? "scaling" : string.Create(Invariant, $"scaling-p{payload.Key}"),
                    payload.Key == 0 ? "" : $", {RunKey.PayloadSize(payload.Key)} payload"));
        }
        return html.ToString();
    }

    /// <summary>Every column of results.md's tables, the series' figures and the sweeps' tables, under one heading.</summary>
    public static string AllFigures(ReportDocument figures) =>
        "<h2>All figures</h2><p class=\"note\">Every column of results.md; wide tables scroll sideways.</p>" + figures.Html(headingOffset: 1);

    public static string NotRun(IReadOnlyList<NotRunEntry> notRun) => notRun.Count == 0 ? ""
        : "<h2 id=\"not-run\">Not run</h2>" + ReportTable.Html(ReportColumns.NotRun, notRun);

    public static string Environment(IReadOnlyDictionary<string, string> environment)
    {
        var html = new StringBuilder("<details id=\"environment\"><summary><b>Environment</b> (machine, software, the run's settings)</summary><ul class=\"env\">");
        foreach (var (key, value) in environment)
            html.Append(Invariant, $"<li><b>{Encode(key)}</b>: {Encode(value)}</li>");
        return html.Append("</ul></details>").ToString();
    }

    /// <summary>Payload MB/s against payload size, log–log, a line per transport, the references dashed grey; empty under two sizes with a payload.</summary>
    internal static string PayloadChart(IReadOnlyList<TransportSummary> summaries)
    {
        var points = PayloadTrend.MegabytesBySize(summaries);
        if (points.Count == 0)
            return "";
        return LogLogChart.Render("payload-throughput", "Payload MB/s against payload size, log–log (references dashed grey) — higher is better",
            [.. points.Select(p => p.PayloadBytes).Distinct().Select(p => ((double)p, RunKey.PayloadSize(p)))],
            [.. points.GroupBy(p => p.Row).Select(t => new LogLogChart.Series(t.Key.Label,
                [.. t.Select(p => new LogLogChart.Point(p.PayloadBytes, p.MegabytesPerSecond,
                    string.Create(Invariant, $"{t.Key.Label}, {RunKey.PayloadSize(p.PayloadBytes)}: {p.MegabytesPerSecond:F1} MB/s")))],
                t.Key.IsReference))]);
    }

    /// <summary>The few columns a reader looks at first (the rest are under "All figures"): it fits a 1,280-pixel page.</summary>
    private static string MainTable(string id, IReadOnlyList<TransportSummary> rows)
    {
        return ReportTable.Html(ReportColumns.SummaryAtAGlance, ReportContent.Ranked(rows), $" id=\"summary-{id}\" class=\"summary\"");
    }

    /// <summary>
    /// A chart of the transports; a peer (often many times faster, which would flatten every other bar) is written beside it, not drawn.
    /// </summary>
    private static string BarChart(string id, string title, IReadOnlyList<TransportSummary> rows,
        Func<TransportSummary, double> value, Func<TransportSummary, double> interval, string format)
    {
        var drawn = rows.Where(r => !r.IsPeer).ToList();
        var beside = rows.Where(r => r.IsPeer).Select(r => $"{r.Transport}: {value(r).ToString(format, Invariant)}").ToList();
        if (drawn.Count == 0)
            (drawn, beside) = (rows.ToList(), []);
        // A chart whose bars are all the same (within 1 %) compares nothing: left out.
        if (drawn.Count > 1 && drawn.Max(value) - drawn.Min(value) <= 0.01 * Math.Abs(drawn.Max(value)))
            return "";
        var chart = BarChart(id, title, drawn.Select(r => new ReportBar(r.Transport, value(r), interval(r), r.Key.IsReference)).ToList(), format);
        return beside.Count == 0 ? chart
            : chart + $"<p class=\"note beside\">Beside the chart, not drawn (the databases' own tool, on another scale): {Encode(string.Join("; ", beside))}.</p>";
    }

    /// <summary>A horizontal bar chart, one bar per row, with an optional interval drawn as a whisker.</summary>
    public static string BarChart(string id, string title, IReadOnlyList<ReportBar> bars, string format)
    {
        var rows = bars;
        Func<ReportBar, double> value = b => b.Value, interval = b => b.Interval;
        const int plotWidth = 640, rowHeight = 22, top = 28;
        // Room for the longest label (about 7 px a character at the report's font size): names like
        // NetTcpSmallBatchesAsyncSyncServer must not be cut off at the left edge.
        var labelWidth = Math.Max(200, 16 + (int)Math.Ceiling(7.2 * rows.Max(r => r.Label.Length)));
        var max = rows.Max(r => value(r) + interval(r));
        max = max > 0 ? max : 1;
        // When the bars span more than 20× (a peer far faster, a lock-step transport far slower), a linear axis flattens all the
        // others to slivers: the axis turns logarithmic, from half the smallest value, and the title says so.
        var positives = rows.Select(value).Where(v => v > 0).ToList();
        var floor = positives.Count > 0 ? positives.Min() / 2 : 0;
        var logScale = positives.Count > 1 && positives.Max() / positives.Min() > 20;
        double Scale(double v) => logScale
            ? Math.Max(0, Math.Log10(Math.Max(v, floor) / floor) / Math.Log10(max / floor)) * plotWidth
            : Math.Max(0, v) / max * plotWidth;
        if (logScale)
            title += string.Create(Invariant, $" (log scale: the values span {positives.Max() / positives.Min():N0}×)");
        var height = top + rows.Count * rowHeight + 10;
        var svg = new StringBuilder();
        svg.Append(Invariant, $"<figure><svg id=\"{id}\" class=\"chart{(logScale ? " log" : "")}\" role=\"img\" width=\"{labelWidth + plotWidth + 90}\" height=\"{height}\" viewBox=\"0 0 {labelWidth + plotWidth + 90} {height}\">");
        svg.Append(Invariant, $"<text x=\"0\" y=\"16\" font-weight=\"bold\">{Encode(title)}</text>");
        for (var i = 0; i < rows.Count; i++)
        {
            var row = rows[i];
            var y = top + i * rowHeight;
            // A negative value (an overhead below zero) draws no bar; its figure is still written.
            var width = Scale(value(row));
            var css = row.Baseline ? "bar baseline" : "bar";
            svg.Append(Invariant, $"<text x=\"{labelWidth - 6}\" y=\"{y + 14}\" text-anchor=\"end\">{Encode(row.Label)}</text>");
            svg.Append(Invariant, $"<rect class=\"{css}\" data-transport=\"{Encode(row.Label)}\" x=\"{labelWidth}\" y=\"{y + 3}\" width=\"{width:F1}\" height=\"{rowHeight - 6}\"/>");
            var ci = interval(row);
            if (ci > 0)
            {
                var low = labelWidth + Scale(value(row) - ci); // an interval wider than the value stops at the axis
                var high = labelWidth + Scale(value(row) + ci);
                svg.Append(Invariant, $"<line class=\"ci\" x1=\"{low:F1}\" x2=\"{high:F1}\" y1=\"{y + 11}\" y2=\"{y + 11}\"/>");
                svg.Append(Invariant, $"<line class=\"ci\" x1=\"{low:F1}\" x2=\"{low:F1}\" y1=\"{y + 6}\" y2=\"{y + 16}\"/>");
                svg.Append(Invariant, $"<line class=\"ci\" x1=\"{high:F1}\" x2=\"{high:F1}\" y1=\"{y + 6}\" y2=\"{y + 16}\"/>");
            }
            svg.Append(Invariant, $"<text x=\"{labelWidth + Math.Max(width, ci > 0 ? Scale(value(row) + ci) : 0) + 6:F1}\" y=\"{y + 14}\">{value(row).ToString(format, Invariant)}</text>");
        }
        svg.Append("</svg></figure>");
        return svg.ToString();
    }

    /// <summary>Mean time against record count, one line per transport, on log–log axes (sizes span orders of magnitude).</summary>
    private static string LineChart(IReadOnlyList<TransportSummary> summaries, string id, string payload) =>
        LogLogChart.Render(id, $"Mean time (s) against records{payload}, log–log",
            [.. summaries.Select(s => s.Records).Distinct().Select(r => ((double)r, r.ToString("N0", Invariant)))],
            [.. summaries.GroupBy(s => s.Transport).Select(t => new LogLogChart.Series(t.Key,
                [.. t.Select(s => new LogLogChart.Point(s.Records, Math.Max(s.Seconds.Mean, 1e-4), string.Create(Invariant, $"{s.Transport}: {s.Seconds.Mean:F3} s")))]))],
            legend: 230);

    private static string Encode(string text) => WebUtility.HtmlEncode(text);
}
