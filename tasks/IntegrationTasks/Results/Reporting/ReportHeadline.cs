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
        var sizes = MainFirst(summaries)
            .Select(g => (Size: g.Key, Transports: g.Where(s => !s.Key.IsReference).ToList(), All: g.ToList())).ToList();
        var most = sizes.Count == 0 ? 0 : sizes.Max(s => s.Transports.Count);
        // One size that only a few ran at (a cap's: the one-call-per-record ones) says so.
        foreach (var (records, transports, size) in sizes)
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
            line += ReferenceRatio.Of(fastest) is { } ratio
                ? string.Create(Invariant, $", {ratio.Figure()}× {ratio.Reference} ({ratio.Kind}; {ratio.Reference} is the same work with no transport)")
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
        // A cap is said as a cap: the transport ran, at the sizes up to it.
        foreach (var cap in notRun.Where(n => n.Cap is not null).GroupBy(n => n.Cap!.Value.MaxRecords))
            lines.Add(string.Create(Invariant,
                $"Capped: {string.Join(", ", cap.Select(n => n.Cap!.Value.Transport).Distinct())} make one call per record and ran up to {cap.Key:N0} records, not at the larger counts (see \"Not run\" to raise the cap)."));
        var absent = notRun.Where(n => n.Cap is null).Select(n => n.Transport).Distinct().ToList();
        if (absent.Count > 0)
            lines.Add($"Not run: {string.Join(", ", absent)} — see \"Not run\" for why and how.");
        foreach (var fault in faults)
            lines.Add(string.Create(Invariant, $"Under {fault.Fault}, {fault.Transport} at {fault.Records:N0} records: {fault.Outcome}; rows lost {fault.RowsLost}, duplicated {fault.RowsDuplicated}."));
        return lines;
    }

    /// <summary>
    /// The report's sizes, the main comparison first: those most transports ran at (smallest first among them), then the sizes only a
    /// few ran at (a cap's). Every table and the findings follow this order.
    /// </summary>
    public static List<IGrouping<RunSize, TransportSummary>> MainFirst(IEnumerable<TransportSummary> summaries)
    {
        var sizes = summaries.GroupBy(s => s.Size).ToList();
        int Ran(IGrouping<RunSize, TransportSummary> size) => size.Count(s => !s.Key.IsReference);
        var most = sizes.Count == 0 ? 0 : sizes.Max(Ran);
        return [.. sizes.OrderByDescending(s => Ran(s) == most).ThenBy(s => s.Key)];
    }

    /// <summary>The main comparison: the largest size most transports ran at.</summary>
    public static IGrouping<RunSize, TransportSummary> Main(IEnumerable<TransportSummary> summaries)
    {
        var sizes = MainFirst(summaries);
        int Ran(IGrouping<RunSize, TransportSummary> size) => size.Count(s => !s.Key.IsReference);
        return sizes.Where(s => Ran(s) == Ran(sizes[0])).Last();
    }
}
