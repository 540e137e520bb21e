using System.Globalization;

namespace IntegrationTasks.Results;

/// <summary>
/// What the report says first, before any environment or table: for each record count the fastest transport and its ratios to
/// PipelinedCopy and to the peer (or why a ratio is missing), then what failed, what was not run, and the fault table's verdicts.
/// </summary>
public static class ReportHeadline
{
    private static readonly CultureInfo Invariant = CultureInfo.InvariantCulture;

    public static List<string> Lines(IReadOnlyList<TransportSummary> summaries, IReadOnlyList<FailedEntry> failed,
        IReadOnlyList<NotRunEntry> notRun, IReadOnlyList<FaultRow> faults)
    {
        var lines = new List<string>();
        var sizes = summaries.GroupBy(s => s.Size)
            .Select(g => (Size: g.Key, Transports: g.Where(s => !s.Key.IsReference).ToList(), All: g.ToList())).ToList();
        var most = sizes.Count == 0 ? 0 : sizes.Max(s => s.Transports.Count);
        // The sizes most transports ran at first; one that only a few ran at (a cap's: the one-call-per-record ones) says so.
        foreach (var (records, transports, size) in sizes.OrderByDescending(s => s.Transports.Count == most).ThenBy(s => s.Size))
        {
            var fastest = transports.FirstOrDefault();
            if (fastest is null)
                continue;
            var among = transports.Count >= most ? ""
                : transports.Count == 1 ? " (only one transport ran at this size)"
                : string.Create(Invariant, $" (only {transports.Count} transports ran at this size)");
            var line = string.Create(Invariant, $"{records.Heading}{among}: fastest transport {fastest.Transport}, {fastest.Seconds.MeanWithInterval()} s");
            if (!fastest.Seconds.HasInterval)
                line += " (too few runs to call it fastest)";
            line += fastest.RatioToPipelined is { } pipelined
                ? string.Create(Invariant, $", {pipelined:F2}× {fastest.Reference} (the same work with no transport)")
                : "; PipelinedCopy was not in this run, so no transport's cost can be told apart from the database work (add it to -p:Transports)";
            var peer = size.FirstOrDefault(s => s.IsPeer);
            line += fastest.RatioToPeer is { } toPeer && peer is not null
                ? string.Create(Invariant, $", {toPeer:F1}× {peer.Transport}")
                : "";
            var slowest = transports[^1];
            if (transports.Count > 1)
                line += string.Create(Invariant, $"; slowest {slowest.Transport}, {slowest.Seconds.Mean / fastest.Seconds.Mean:F1}× the fastest");
            lines.Add(line + ".");
        }
        lines.AddRange(PayloadTrend.Lines(summaries));
        lines.Add(failed.Count == 0
            ? "Nothing failed."
            : $"Failed: {string.Join("; ", failed.Select(f => $"{f.Transport} at {f.RecordsText} records ({f.Code})"))} — see \"Failed\".");
        if (notRun.Count > 0)
            lines.Add($"Not run: {string.Join(", ", notRun.Select(n => n.Transport))} — see \"Not run here\" for why and how.");
        foreach (var fault in faults)
            lines.Add(string.Create(Invariant, $"Under {fault.Fault}, {fault.Transport} at {fault.Records:N0} records: {fault.Outcome}; rows lost {fault.RowsLost}, duplicated {fault.RowsDuplicated}."));
        return lines;
    }

    public static string Markdown(IReadOnlyList<string> lines) =>
        lines.Count == 0 ? "" : "## Findings\n\n" + string.Concat(lines.Select(l => $"- {l}\n")) + "\n";
}
