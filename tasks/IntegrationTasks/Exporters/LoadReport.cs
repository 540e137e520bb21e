using System.Globalization;
using System.Net;
using System.Text;
using IntegrationTasks.Results;

namespace IntegrationTasks.Exporters;

/// <summary>
/// Many clients at once (RunAll with -p:Clients=1+4+…, or the Load target): for each transport its throughput against clients,
/// its batch-latency percentiles, what its server spent, and a sentence on where it stops scaling and what it ran out of —
/// each reason read from the measurements (connections held, CPU, the thread pool, the ratio to PipelinedCopy at the same N).
/// </summary>
public static class LoadReport
{
    private static readonly CultureInfo Invariant = CultureInfo.InvariantCulture;

    /// <summary>A step to more clients that adds less than this much throughput is where the transport stopped scaling.</summary>
    public const double ScalingStep = 1.10;

    /// <summary>
    /// Where a transport stops scaling and why, from its own figures: the first client count that no larger count beats by 10 %
    /// throughput, and what was true there (read in this order): the server held fewer connections than clients (it serves them
    /// in turn), it ran as fast as PipelinedCopy at the same N (the database work is the limit), the two processes' CPU filled the
    /// machine, work items waited for the thread pool, requests queued for the server (at least one per client), or — none of
    /// those — batches only waited longer.
    /// </summary>
    public static string Saturation(LoadCurve curve, int cores)
    {
        var points = curve.Points;
        var first = points[0];
        // The first count that no larger one beats by 10 % (a dip at one count followed by a rise is noise, not the knee).
        var at = Enumerable.Range(0, points.Count)
            .First(i => points.Skip(i + 1).All(later => later.RecordsPerSecond < points[i].RecordsPerSecond * ScalingStep));
        var knee = points[at];
        var peak = points.MaxBy(p => p.RecordsPerSecond)!;
        var head = at == points.Count - 1 && points.Count > 1
            ? string.Create(Invariant, $"{curve.Label}: still scaling at {knee.Clients} clients ({knee.RecordsPerSecond:N0} records/s, {knee.RecordsPerSecond / first.RecordsPerSecond:0.##}× its rate at {first.Clients})")
            : string.Create(Invariant, $"{curve.Label}: stops scaling at {knee.Clients} client{(knee.Clients == 1 ? "" : "s")} ({knee.RecordsPerSecond:N0} records/s; at most {peak.RecordsPerSecond:N0} at {peak.Clients})");
        var stillScaling = at == points.Count - 1 && points.Count > 1;
        if (stillScaling)
            return head + ".";
        var busiest = points[^1];
        var reasons = new List<string>();
        if (busiest.ServerErrors.Count > 0)
            reasons.Add(string.Create(Invariant,
                $"at {busiest.Clients} clients the server logged {ServerLogErrors.Describe(busiest.ServerErrors)} (see its log){(busiest.Reconnects > 0 ? $" and the clients reconnected {busiest.Reconnects:N0} times" : "")}"));
        if (busiest.ServerConnections is { } open && open > 0 && open < busiest.Clients)
            reasons.Add(string.Create(Invariant, $"the server held at most {open} connection{(open == 1 ? "" : "s")} open for {busiest.Clients} clients: it serves them in turn"));
        if (busiest.ClientLockShare is { } locked && locked >= 0.25)
            reasons.Add(string.Create(Invariant,
                $"the client database's write lock: at {busiest.Clients} clients they spent {locked:P0} of their time waiting for a batch's transaction to begin (SQLite takes one writer at a time)"));
        if (knee.RatioToPipelined is { } ratio && ratio <= 1.2)
            reasons.Add(string.Create(Invariant, $"it ran at {ratio:0.##}× PipelinedCopy at the same {knee.Clients} clients: the reads and inserts themselves are the limit, not the transport"));
        var cpu = (knee.ServerCores ?? 0) + knee.ClientCores;
        if (knee.ServerCores is not null && cpu >= 0.85 * cores)
            reasons.Add(string.Create(Invariant, $"CPU: server {knee.ServerCores:0.##} and client {knee.ClientCores:0.##} of the {cores} cores"));
        if (busiest.ServerQueue is { } queue && busiest.ServerThreads is { } threads && queue >= threads)
            reasons.Add(string.Create(Invariant, $"the server's thread pool: up to {queue:N0} work items waited for its {threads} threads"));
        if (busiest.RequestsWaiting is { } waiting && waiting >= busiest.Clients)
            reasons.Add(string.Create(Invariant,
                $"requests queued for the server: up to {waiting:N0} waited at once for {busiest.Clients} clients (it takes them on fewer at a time than they ask)"));
        if (reasons.Count == 0 && busiest.Batch is { } late && first.Batch is { } early && early.P50Ms > 0 && late.P50Ms >= 1.5 * early.P50Ms)
            reasons.Add(string.Create(Invariant,
                $"not CPU ({cpu:0.##} of {cores} cores), so a shared resource: the median batch waited {late.P50Ms / early.P50Ms:0.#}× longer at {busiest.Clients} clients than at {first.Clients} ({early.P50Ms:0.#} → {late.P50Ms:0.#} ms)"));
        return reasons.Count == 0 ? head + "." : head + " — " + string.Join("; ", reasons) + ".";
    }

    public static string Markdown(IReadOnlyList<LoadCurve> curves, int cores)
    {
        if (curves.Count == 0)
            return "";
        var md = new StringBuilder("\n## Many clients at once\n\n");
        md.Append("Each run starts its clients at once, each with its own connection and share of the batches; every client's rows are verified. ");
        md.Append("Latencies are every batch of every measured run (HdrHistograms added): to committed, and to the reply received. ");
        md.Append("Server CPU is in cores kept busy; threads, thread-pool queue and open connections are the server's most at once; ");
        md.Append("requests waiting are the most that queued for the server at once where it can tell (RabbitMQ's request queue, the file inbox); ");
        md.Append("memory is the server's peak and how much the client process grew during a run; ");
        md.Append("client lock wait is the share of the clients' time spent waiting for a batch's transaction to begin (SQLite's one writer); ");
        md.Append("server errors are the coded warnings and errors in the server's log during the runs, by code, and reconnects the clients' resumptions after them.\n\n");
        md.Append(ReportTable.Markdown(ReportColumns.Load, curves.SelectMany(c => c.Points.Select(p => (c, p)))));
        md.Append("\nWhere each stops scaling (the first client count no larger one beats by 10 % throughput), and what it ran out of, as measured:\n\n");
        foreach (var curve in curves.Where(c => !c.IsReference))
            md.Append("- ").Append(Saturation(curve, cores)).Append('\n');
        return md.ToString();
    }


    private static readonly string[] Colours = ["#4a7bd0", "#d0704a", "#4ab07b", "#a04ad0", "#d0b04a", "#4ab0d0", "#d04a8a", "#2f5d8a", "#8a5d2f", "#5d8a2f"];

    /// <summary>The percentiles the distribution chart draws, up to the one the batches can resolve (1/(1−p) ≤ batches).</summary>
    private static readonly double[] Percentiles = [0, 50, 75, 90, 95, 99, 99.5, 99.9, 99.95, 99.99, 99.995, 99.999];

    public static string Html(IReadOnlyList<LoadCurve> curves, int cores)
    {
        if (curves.Count == 0)
            return "";
        var html = new StringBuilder("<h2 id=\"many-clients\">Many clients at once</h2>");
        html.Append(Chart("throughput-clients", "Records per second against clients at once (references dashed)", "clients (log scale)", "records/s",
            curves.Select(c => (c.Label, c.IsReference, (IReadOnlyList<(double X, double Y)>)c.Points.Select(p => ((double)p.Clients, p.RecordsPerSecond)).ToList())).ToList(),
            logX: true, logY: false, xTick: x => x.ToString("0", Invariant), yFormat: "N0"));
        var distributions = curves.Where(c => !c.IsReference && c.Points[^1].Batch is not null).Select(c =>
        {
            var busiest = c.Points[^1];
            var values = busiest.Batch!.ValuesAtPercentiles(Percentiles.Where(p => p == 0 || 1 / (1 - p / 100) <= busiest.Batch.Batches * (1 + 1e-9)));
            return ($"{c.Label} at {busiest.Clients}", false, (IReadOnlyList<(double X, double Y)>)values.Select(v => (Math.Log10(1 / (1 - Math.Min(v.Percentile, 99.9999) / 100)), Math.Max(v.Ms, 0.001))).ToList());
        }).ToList();
        if (distributions.Count > 0)
            html.Append(Chart("latency-distribution", "Batch latency (ms, log scale) by percentile, at each transport's most clients — as HdrHistogram plots it", "percentile", "ms",
                distributions, logX: false, logY: true, xTick: x => x switch { < 0.5 => "0%", < 1.5 => "90%", < 2.5 => "99%", < 3.5 => "99.9%", < 4.5 => "99.99%", _ => "99.999%" },
                xTicks: [0, 1, 2, 3, 4, 5], yFormat: "0.###"));
        html.Append("<ul class=\"saturation\">");
        foreach (var curve in curves.Where(c => !c.IsReference))
            html.Append(Invariant, $"<li>{WebUtility.HtmlEncode(Saturation(curve, cores))}</li>");
        return html.Append("</ul>").ToString();
    }

    /// <summary>A line chart of several series, each its own colour (dashed for a reference), with the legend on the right.</summary>
    private static string Chart(string id, string title, string xAxis, string yAxis, IReadOnlyList<(string Label, bool Dashed, IReadOnlyList<(double X, double Y)> Points)> series,
        bool logX, bool logY, Func<double, string> xTick, IReadOnlyList<double>? xTicks = null, string yFormat = "G4")
    {
        const int left = 90, width = 600, height = 300, top = 30, legend = 330;
        double Tx(double x) => logX ? Math.Log10(Math.Max(x, 1e-9)) : x;
        double Ty(double y) => logY ? Math.Log10(Math.Max(y, 1e-9)) : y;
        var xs = series.SelectMany(s => s.Points.Select(p => Tx(p.X))).ToList();
        var ys = series.SelectMany(s => s.Points.Select(p => Ty(p.Y))).ToList();
        var (xMin, xMax) = (xs.Min(), xs.Max());
        var (yMin, yMax) = (logY ? ys.Min() : 0, ys.Max());
        if (xMax <= xMin) xMax = xMin + 1;
        if (yMax <= yMin) yMax = yMin + 1;
        double X(double x) => left + (Tx(x) - xMin) / (xMax - xMin) * width;
        double Y(double y) => top + height - (Ty(y) - yMin) / (yMax - yMin) * height;
        var svg = new StringBuilder();
        svg.Append(Invariant, $"<figure><svg id=\"{id}\" class=\"chart\" role=\"img\" width=\"{left + width + legend}\" height=\"{top + height + 44}\">");
        svg.Append(Invariant, $"<text x=\"0\" y=\"16\" font-weight=\"bold\">{WebUtility.HtmlEncode(title)}</text>");
        svg.Append(Invariant, $"<line x1=\"{left}\" y1=\"{top + height}\" x2=\"{left + width}\" y2=\"{top + height}\" stroke=\"#888\"/>");
        svg.Append(Invariant, $"<line x1=\"{left}\" y1=\"{top}\" x2=\"{left}\" y2=\"{top + height}\" stroke=\"#888\"/>");
        foreach (var tick in xTicks?.Where(t => t >= xMin && t <= xMax) ?? series.SelectMany(s => s.Points.Select(p => p.X)).Distinct())
        {
            var x = xTicks is null ? X(tick) : left + (tick - xMin) / (xMax - xMin) * width;
            svg.Append(Invariant, $"<text x=\"{x:F1}\" y=\"{top + height + 16}\" text-anchor=\"middle\">{xTick(tick)}</text>");
        }
        svg.Append(Invariant, $"<text x=\"{left + width / 2}\" y=\"{top + height + 34}\" text-anchor=\"middle\">{WebUtility.HtmlEncode(xAxis)}</text>");
        var yTop = logY ? Math.Pow(10, yMax) : yMax;
        var yBottom = logY ? Math.Pow(10, yMin) : 0;
        svg.Append(Invariant, $"<text x=\"{left - 6}\" y=\"{top + 10}\" text-anchor=\"end\">{yTop.ToString(yFormat, Invariant)}</text>");
        svg.Append(Invariant, $"<text x=\"{left - 6}\" y=\"{top + height}\" text-anchor=\"end\">{yBottom.ToString(yFormat, Invariant)}</text>");
        svg.Append(Invariant, $"<text x=\"{left - 6}\" y=\"{top + height / 2}\" text-anchor=\"end\">{WebUtility.HtmlEncode(yAxis)}</text>");
        for (var i = 0; i < series.Count; i++)
        {
            var (label, dashed, points) = series[i];
            var colour = dashed ? "#7b7b7b" : Colours[i % Colours.Length];
            var line = string.Join(" ", points.Select(p => string.Create(Invariant, $"{X(p.X):F1},{Y(p.Y):F1}")));
            svg.Append(Invariant, $"<polyline class=\"series\" data-transport=\"{WebUtility.HtmlEncode(label)}\" fill=\"none\" stroke=\"{colour}\" stroke-width=\"2\"{(dashed ? " stroke-dasharray=\"6 4\"" : "")} points=\"{line}\"/>");
            foreach (var p in points)
                svg.Append(Invariant, $"<circle cx=\"{X(p.X):F1}\" cy=\"{Y(p.Y):F1}\" r=\"3\" fill=\"{colour}\"/>");
            svg.Append(Invariant, $"<text x=\"{left + width + 14}\" y=\"{top + 12 + i * 16}\" fill=\"{colour}\">{WebUtility.HtmlEncode(label)}</text>");
        }
        return svg.Append("</svg></figure>").ToString();
    }
}
