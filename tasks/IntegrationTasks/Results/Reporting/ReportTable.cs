using System.Globalization;
using System.Text;
using IntegrationTasks.Transfer;

namespace IntegrationTasks.Results;

/// <summary>
/// One column of a report table, declared once and rendered by every writer — Markdown, CSV and HTML (BenchmarkDotNet's
/// <c>IColumn</c> and exporters are the model): its id (the CSV header), its header, the cell of a row, and whether it is a
/// number (right-aligned). Adding a figure to the report is adding one column.
/// </summary>
public sealed record ReportColumn<TRow>(string Id, string Header, Func<TRow, string> Cell, bool Numeric = true)
{
    /// <summary>The header where the page is narrow (the HTML's first table); the <see cref="Header"/> otherwise.</summary>
    public string? ShortHeader { get; init; }

    /// <summary>The cell where the page shows it otherwise (a command without Markdown's backticks); the <see cref="Cell"/> otherwise.</summary>
    public Func<TRow, string>? HtmlCell { get; init; }
}

/// <summary>Renders <see cref="ReportColumn{TRow}"/>s and rows as a Markdown, CSV or HTML table.</summary>
public static class ReportTable
{
    internal static readonly CultureInfo Invariant = CultureInfo.InvariantCulture;

    public static string Markdown<TRow>(IReadOnlyList<ReportColumn<TRow>> columns, IEnumerable<TRow> rows)
    {
        var md = new StringBuilder("| ").AppendJoin(" | ", columns.Select(c => c.Header)).Append(" |\n|");
        foreach (var column in columns)
            md.Append(column.Numeric ? "---:|" : "---|");
        md.Append('\n');
        foreach (var row in rows)
            md.Append("| ").AppendJoin(" | ", columns.Select(c => c.Cell(row).Replace("|", "\\|").ReplaceLineEndings(" "))).Append(" |\n");
        return md.ToString();
    }

    /// <summary>A header of the columns' ids, a line per row, then a line per <paramref name="others"/> (cells by id, the rest empty).</summary>
    public static string Csv<TRow>(IReadOnlyList<ReportColumn<TRow>> columns, IEnumerable<TRow> rows, IEnumerable<IReadOnlyDictionary<string, string>>? others = null)
    {
        var csv = new StringBuilder().AppendJoin(",", columns.Select(c => c.Id)).Append('\n');
        foreach (var row in rows)
            csv.AppendJoin(",", columns.Select(c => c.Cell(row))).Append('\n');
        foreach (var other in others ?? [])
            csv.AppendJoin(",", columns.Select(c => other.GetValueOrDefault(c.Id, ""))).Append('\n');
        return csv.ToString();
    }

    /// <summary>Text as one CSV field: quoted, quotes doubled, on one line.</summary>
    public static string CsvText(string text) => "\"" + text.Replace("\"", "\"\"").ReplaceLineEndings(" ") + "\"";

    /// <summary>An HTML table: the first column as the row's name, other text left-aligned, numbers as the page aligns them.</summary>
    public static string Html<TRow>(IReadOnlyList<ReportColumn<TRow>> columns, IEnumerable<TRow> rows, string attributes = "", Func<TRow, string>? rowAttributes = null)
    {
        var html = new StringBuilder($"<table{attributes}><tr>");
        foreach (var column in columns)
            html.Append("<th>").Append(Encode(column.ShortHeader ?? column.Header)).Append("</th>");
        html.Append("</tr>");
        foreach (var row in rows)
        {
            html.Append("<tr").Append(rowAttributes?.Invoke(row)).Append('>');
            for (var i = 0; i < columns.Count; i++)
                html.Append(i == 0 || columns[i].Numeric ? "<td>" : "<td style=\"text-align:left\">").Append(Encode((columns[i].HtmlCell ?? columns[i].Cell)(row))).Append("</td>");
            html.Append("</tr>");
        }
        return html.Append("</table>").ToString();
    }

    /// <summary>Text as HTML: the markup characters escaped, the rest (±, ×, µ) left as they are in the UTF-8 page.</summary>
    private static string Encode(string text) => text.Replace("&", "&amp;").Replace("<", "&lt;").Replace(">", "&gt;").Replace("\"", "&quot;");

    /// <summary>The columns named, in that order.</summary>
    public static IReadOnlyList<ReportColumn<TRow>> Select<TRow>(IReadOnlyList<ReportColumn<TRow>> columns, params string[] ids) =>
        [.. ids.Select(id => columns.Single(c => c.Id == id))];

    internal static string Cell(double? value, string format) => value is { } v ? v.ToString(format, Invariant) : "–";
    internal static string Cell(long? value, string format) => value is { } v ? v.ToString(format, Invariant) : "–";
}

/// <summary>A row of the main table: a transport's summary, and whether it is the fastest (its "% slower" and difference are blank).</summary>
public sealed record RankedSummary(TransportSummary Summary, bool Fastest);

/// <summary>The report's tables, each a list of columns.</summary>
public static class ReportColumns
{
    private static CultureInfo Invariant => ReportTable.Invariant;
    private static string Cell(double? value, string format) => ReportTable.Cell(value, format);
    private static string Cell(long? value, string format) => ReportTable.Cell(value, format);
    private static string GcCount(Measurement run, int generation) =>
        run.ClientGcCollections is { } counts && generation < counts.Length ? counts[generation].ToString(Invariant) : "";
    private static string Ratio(double? ratio) => Cell(ratio, "F2");

    private static string Overhead(TransportSummary s) =>
        s.OverheadMicrosPerRecord is { } o
            ? s.Seconds.HasInterval ? string.Create(Invariant, $"{o:F2} ±{s.OverheadCi95Micros ?? 0:F2}") : string.Create(Invariant, $"{o:F2} (no interval)")
            : "–";

    /// <summary>The main table: a transport at a record count, over its repetitions (the HTML's first table shows a few of them).</summary>
    public static readonly IReadOnlyList<ReportColumn<RankedSummary>> Summary =
    [
        new("transport", "Method", r => r.Summary.Transport, Numeric: false),
        new("serverReads", "Server reads", r => ReportContent.ServerWorkLabel(r.Summary.ServerWork), Numeric: false),
        new("encoding", "Encoding", r => r.Summary.Encoding ?? "–", Numeric: false),
        new("meanSeconds", "Mean (s)", r => r.Summary.Seconds.Mean.ToString("F3", Invariant)),
        new("ci95Seconds", "±95% CI (s)", r => r.Summary.Seconds.IntervalCell()),
        new("percentSlower", "% slower", r => r.Fastest ? "" : r.Summary.Unranked ? "–" : r.Summary.PercentSlowerThanFastest.ToString("F2", Invariant)),
        new("secondsBehind", "Difference (s)", r => r.Fastest ? "" : r.Summary.Unranked ? "–" : r.Summary.SecondsBehindFastest.ToString("F3", Invariant)),
        new("againstAbove", "Against the one above", r => ReportContent.Verdict(r.Summary), Numeric: false),
        new("medianSeconds", "Median (s)", r => r.Summary.Seconds.Median.ToString("F3", Invariant)),
        new("stdDevSeconds", "Std dev (s)", r => r.Summary.Seconds.StdDev.ToString("F3", Invariant)),
        new("minSeconds", "Min (s)", r => r.Summary.Seconds.Min.ToString("F3", Invariant)),
        new("maxSeconds", "Max (s)", r => r.Summary.Seconds.Max.ToString("F3", Invariant)),
        new("warmupSeconds", "Warm-up (s)", r => Cell(r.Summary.WarmupSeconds, "F3")),
        new("outlierRuns", "Outlier runs", r => r.Summary.OutlierRepetitions.Count > 0 ? string.Join(", ", r.Summary.OutlierRepetitions) : "–", Numeric: false),
        new("recordsPerSecond", "Records/s", r => r.Summary.MeanRecordsPerSecond.ToString("N0", Invariant)),
        new("payloadMBPerSecond", "Payload MB/s", r => Cell(r.Summary.PayloadMegabytesPerSecond, "F1")),
        new("ratioToDirectCopy", "× DirectCopy", r => Ratio(r.Summary.RatioToBaseline)),
        new("ratioToPipelinedCopy", "× PipelinedCopy (ratio of means)", r => Ratio(r.Summary.RatioToPipelined)),
        new("pairedRatioToPipelinedCopy", "Paired × PipelinedCopy (±95% CI)", r => r.Summary.PairedRatioToPipelined is { } p
            ? p.HasInterval ? string.Create(Invariant, $"{p.Mean:F2} ±{p.Ci95:F2}") : string.Create(Invariant, $"{p.Mean:F2} (no interval)")
            : "–") { ShortHeader = "Paired × PipelinedCopy" },
        new("overheadMicrosPerRecord", "Transport overhead µs/record (±95% CI)", r => Overhead(r.Summary)) { ShortHeader = "Overhead µs/record" },
        new("ratioToPeer", "× peer", r => Ratio(r.Summary.RatioToPeer)),
        new("bytesPerRecord", "Bytes/record", r => Cell(r.Summary.MeanBytesPerRecord, "F0")),
        new("clientPeakMB", "Client peak MB", r => (r.Summary.MaxClientPeakBytes / 1048576.0).ToString("F0", Invariant)),
        new("serverPeakMB", "Server peak MB", r => Cell(r.Summary.MaxServerPeakBytes / 1048576.0, "F0")),
    ];

    /// <summary>The main table's columns for these rows: "Payload MB/s" only where a row carried a payload.</summary>
    public static IReadOnlyList<ReportColumn<RankedSummary>> SummaryFor(IEnumerable<TransportSummary> rows) =>
        rows.Any(r => r.Key.PayloadBytes > 0) ? Summary : [.. Summary.Where(c => c.Id != "payloadMBPerSecond")];

    /// <summary>What the HTML's first table shows: the few columns a reader looks at first (it fits a 1,280-pixel page).</summary>
    public static readonly IReadOnlyList<ReportColumn<RankedSummary>> SummaryAtAGlance = ReportTable.Select(Summary,
        "transport", "meanSeconds", "ci95Seconds", "recordsPerSecond", "ratioToPipelinedCopy", "overheadMicrosPerRecord", "ratioToPeer", "againstAbove");

    /// <summary>What the runs cost besides time (rows with <see cref="TransportSummary.Costs"/>).</summary>
    public static readonly IReadOnlyList<ReportColumn<TransportSummary>> Costs =
    [
        new("transport", "Method", s => s.Transport, Numeric: false),
        new("setupSeconds", "Setup (s)", s => s.Costs!.SetupSeconds.ToString("F3", Invariant)),
        new("firstCommitSeconds", "First commit (s)", s => s.Costs!.FirstCommitSeconds.ToString("F3", Invariant)),
        new("clientCpuMsPer1000", "Client CPU ms / 1,000 records", s => s.Costs!.ClientCpuMsPer1000.ToString("F1", Invariant)),
        new("clientJitMsPerRun", "Client JIT ms / run", s => Cell(s.Costs!.ClientJitMsPerRun, "F0")),
        new("clientGcPauseMsPerRun", "Client GC pause ms / run", s => Cell(s.Costs!.ClientGcPauseMsPerRun, "F0")),
        new("serverCpuMsPer1000", "Server CPU ms / 1,000 records", s => Cell(s.Costs!.ServerCpuMsPer1000, "F1")),
        new("clientAllocatedBytesPerRecord", "Client bytes allocated / record", s => s.Costs!.ClientAllocatedBytesPerRecord.ToString("N0", Invariant)),
        new("serverAllocatedBytesPerRecord", "Server bytes allocated / record", s => Cell(s.Costs!.ServerAllocatedBytesPerRecord, "N0")),
        new("clientThreads", "Client thread-pool threads (max)", s => s.Costs!.ThreadPoolMaxThreads.ToString(Invariant)),
        new("clientQueue", "Client queued work items (max)", s => s.Costs!.ThreadPoolMaxQueue.ToString(Invariant)),
        new("clientItemsPer1000", "Client work items / 1,000 records", s => s.Costs!.ThreadPoolItemsPer1000.ToString("F1", Invariant)),
        new("serverItemsPer1000", "Server work items / 1,000 records", s => Cell(s.Costs!.ServerItemsPer1000, "F1")),
        new("serverThreads", "Server thread-pool threads (max)", s => s.Costs!.ServerMaxThreads is { } t ? t.ToString(Invariant) : "–"),
        new("serverQueue", "Server queued work items (max)", s => s.Costs!.ServerMaxQueue is { } q ? q.ToString(Invariant) : "–"),
    ];

    /// <summary>What a queue transport's broker used (rows with <see cref="TransportSummary.Broker"/>).</summary>
    public static readonly IReadOnlyList<ReportColumn<TransportSummary>> Broker =
    [
        new("transport", "Method", s => s.Transport, Numeric: false),
        new("brokerCpuMsPer1000", "Broker CPU ms / 1,000 records", s => s.Broker!.CpuMsPer1000.ToString("F1", Invariant)),
        new("brokerCores", "Broker CPU (cores)", s => s.Broker!.Cores.ToString("F2", Invariant)),
        new("brokerPeakMB", "Broker peak MB", s => Cell(s.Broker!.PeakBytes / 1048576.0, "F0")),
        new("brokerWrittenBytesPerRecord", "Written to storage bytes / record", s => Cell(s.Broker!.StorageWriteBytesPerRecord, "F0")),
    ];

    /// <summary>How long a batch waited (rows with <see cref="TransportSummary.BatchLatency"/>).</summary>
    public static readonly IReadOnlyList<ReportColumn<TransportSummary>> BatchLatency =
    [
        new("transport", "Method", s => s.Transport, Numeric: false),
        new("batches", "Batches", s => s.BatchLatency!.Batches.ToString("N0", Invariant)),
        new("p50Ms", "p50 (ms)", s => s.BatchLatency!.P50Ms.ToString("F3", Invariant)),
        new("p90Ms", "p90 (ms)", s => s.BatchLatency!.P90Ms.ToString("F3", Invariant)),
        new("p99Ms", "p99 (ms)", s => s.BatchLatency!.P99Ms.ToString("F3", Invariant)),
        new("p999Ms", "p99.9 (ms)", s => s.BatchLatency!.P999Ms.ToString("F3", Invariant)),
        new("maxMs", "Max (ms)", s => s.BatchLatency!.MaxMs.ToString("F3", Invariant)),
    ];

    /// <summary>The many-clients table: a transport at one client count.</summary>
    public static readonly IReadOnlyList<ReportColumn<(LoadCurve Curve, LoadPoint Point)>> Load =
    [
        new("transport", "Method", r => r.Curve.Label, Numeric: false),
        new("clients", "Clients", r => r.Point.Clients.ToString(Invariant)),
        new("records", "Records", r => r.Point.Records.ToString("N0", Invariant)),
        new("recordsPerSecond", "Records/s", r => r.Point.RecordsPerSecond.ToString("N0", Invariant)),
        new("ratioToPipelinedCopy", "× PipelinedCopy (same N)", r => Cell(r.Point.RatioToPipelined, "F2")),
        new("p50Ms", "p50 (ms)", r => Cell(r.Point.Batch?.P50Ms, "F2")),
        new("p90Ms", "p90 (ms)", r => Cell(r.Point.Batch?.P90Ms, "F2")),
        new("p99Ms", "p99 (ms)", r => Cell(r.Point.Batch?.P99Ms, "F2")),
        new("p999Ms", "p99.9 (ms)", r => Cell(r.Point.Batch?.P999Ms, "F2")),
        new("maxMs", "Max (ms)", r => Cell(r.Point.Batch?.MaxMs, "F2")),
        new("replyP50Ms", "Reply p50 (ms)", r => Cell(r.Point.Reply?.P50Ms, "F2")),
        new("replyP99Ms", "Reply p99 (ms)", r => Cell(r.Point.Reply?.P99Ms, "F2")),
        new("serverCores", "Server CPU (cores)", r => Cell(r.Point.ServerCores, "F2")),
        new("clientCores", "Client CPU (cores)", r => r.Point.ClientCores.ToString("F2", Invariant)),
        new("clientLockWait", "Client lock wait", r => Cell(r.Point.ClientLockShare, "P0")),
        new("serverThreads", "Server threads", r => Cell(r.Point.ServerThreads, "N0")),
        new("serverQueue", "Server queue", r => Cell(r.Point.ServerQueue, "N0")),
        new("serverConnections", "Server connections", r => Cell(r.Point.ServerConnections, "N0")),
        new("requestsWaiting", "Requests waiting", r => Cell(r.Point.RequestsWaiting, "N0")),
        new("serverPeakMB", "Server peak (MB)", r => Cell(r.Point.ServerPeakBytes / 1048576.0, "F0")),
        new("clientGrowthMB", "Client growth (MB)", r => Cell(r.Point.ClientGrowthBytes / 1048576.0, "F0")),
        new("serverErrors", "Server errors", r => ServerLogErrors.Describe(r.Point.ServerErrors)),
        new("reconnects", "Reconnects", r => r.Point.Reconnects.ToString("N0", Invariant)),
    ];

    /// <summary>What was asked for and failed, with its code and message.</summary>
    public static readonly IReadOnlyList<ReportColumn<FailedEntry>> Failed =
    [
        new("transport", "Method", f => f.Transport, Numeric: false),
        new("records", "Records", f => f.RecordsText),
        new("code", "Code", f => f.Code, Numeric: false),
        new("message", "Message", f => f.Message, Numeric: false),
    ];

    /// <summary>What is not run here, why, and how to run it.</summary>
    public static readonly IReadOnlyList<ReportColumn<NotRunEntry>> NotRun =
    [
        new("transport", "Method", n => n.Transport, Numeric: false),
        new("why", "Why", n => n.Reason, Numeric: false),
        new("fix", "How to run it", n => n.Fix.Length > 0 ? $"`{n.Fix}`" : "not run by the suite", Numeric: false) { HtmlCell = n => n.Fix },
        new("seriesSeconds", "Series (2014), 1,000,000 records (s)", n => n.SeriesSeconds.Length > 0 ? n.SeriesSeconds : "–")
            { ShortHeader = "Series (2014), 1M records (s)", HtmlCell = n => n.SeriesSeconds },
        new("roleHere", "Its stand-in in the suite", n => n.Replacement.Length > 0 ? n.Replacement : "–", Numeric: false) { HtmlCell = n => n.Replacement },
    ];

    /// <summary>results.csv: every repetition, its key's fields first (failures and transports not run follow as rows of their own).</summary>
    public static readonly IReadOnlyList<ReportColumn<Measurement>> Csv =
    [
        .. RunKey.Fields.Select(f => new ReportColumn<Measurement>(f.Id, f.Id, m => f.Text(m.Key), Numeric: false)),
        new("repetition", "Repetition", m => m.Repetition.ToString(Invariant)),
        new("warmup", "Warm-up", m => m.Warmup ? "true" : "false", Numeric: false),
        new("elapsedSeconds", "Elapsed (s)", m => m.ElapsedSeconds.ToString("R", Invariant)),
        new("recordsPerSecond", "Records/s", m => m.RecordsPerSecond.ToString("R", Invariant)),
        new("firstCommitSeconds", "First commit (s)", m => m.FirstCommitSeconds.ToString("R", Invariant)),
        new("bytesSent", "Bytes sent", m => m.BytesSent.ToString(Invariant)),
        new("bytesReceived", "Bytes received", m => m.BytesReceived.ToString(Invariant)),
        new("clientPeakBytes", "Client peak (bytes)", m => m.ClientPeakBytes.ToString(Invariant)),
        new("clientProcess", "Client process", m => m.ClientProcess ?? nameof(ClientProcessMode.Build), Numeric: false),
        new("clientProcessId", "Client process id", m => m.ClientProcessId?.ToString(Invariant) ?? ""),
        new("clientStartSeconds", "Client process start (s)", m => m.ClientStartSeconds?.ToString("R", Invariant) ?? ""),
        new("clientWarmupSeconds", "Client warm-up (s)", m => m.ClientWarmupSeconds?.ToString("R", Invariant) ?? ""),
        new("clientRunsBefore", "Client process's runs before", m => m.ClientRunsBefore?.ToString(Invariant) ?? ""),
        new("clientCpuUserSeconds", "Client CPU user (s)", m => m.ClientCpuUserSeconds?.ToString("R", Invariant) ?? ""),
        new("clientCpuSystemSeconds", "Client CPU system (s)", m => m.ClientCpuSystemSeconds?.ToString("R", Invariant) ?? ""),
        new("clientAllocatedBytes", "Client bytes allocated", m => m.ClientAllocatedBytes.ToString(Invariant)),
        new("clientGcGen0", "Client GC gen 0", m => GcCount(m, 0)),
        new("clientGcGen1", "Client GC gen 1", m => GcCount(m, 1)),
        new("clientGcGen2", "Client GC gen 2", m => GcCount(m, 2)),
        new("clientGcPauseSeconds", "Client GC pause (s)", m => m.ClientGcPauseSeconds?.ToString("R", Invariant) ?? ""),
        new("clientMaxThreads", "Client threads (most)", m => m.ClientMaxThreads?.ToString(Invariant) ?? ""),
        new("serverPeakBytes", "Server peak (bytes)", m => m.ServerPeakBytes?.ToString(Invariant) ?? ""),
        new("brokerCpuSeconds", "Broker CPU (s)", m => m.BrokerCpuSeconds?.ToString("R", Invariant) ?? ""),
        new("brokerPeakBytes", "Broker peak (bytes)", m => m.BrokerPeakBytes?.ToString(Invariant) ?? ""),
        new("brokerStorageWriteBytes", "Broker bytes written to storage", m => m.BrokerStorageWriteBytes?.ToString(Invariant) ?? ""),
        new("verified", "Verified", m => m.Verified ? "true" : "false", Numeric: false),
        new("timestamp", "Time", m => m.Timestamp.ToString("O", Invariant), Numeric: false),
        new("reconnects", "Reconnects", m => m.Reconnects?.ToString(Invariant) ?? ""),
        new("recoverySeconds", "Recovery (s)", m => m.RecoverySeconds?.ToString("R", Invariant) ?? ""),
        new("failedWith", "Failed with", m => m.FailedWith ?? "", Numeric: false),
        new("batchP50Ms", "Batch p50 (ms)", m => m.BatchLatency?.P50Ms.ToString("R", Invariant) ?? ""),
        new("batchP99Ms", "Batch p99 (ms)", m => m.BatchLatency?.P99Ms.ToString("R", Invariant) ?? ""),
        new("batchP999Ms", "Batch p99.9 (ms)", m => m.BatchLatency?.P999Ms.ToString("R", Invariant) ?? ""),
        new("batchMaxMs", "Batch max (ms)", m => m.BatchLatency?.MaxMs.ToString("R", Invariant) ?? ""),
        new("status", "Status", m => m.Completed ? "measured" : "failed cleanly under the fault", Numeric: false),
        new("message", "Message", _ => "", Numeric: false),
    ];
}
