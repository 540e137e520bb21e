using System.Globalization;

namespace IntegrationTasks.Results;

/// <summary>
/// What changes with the rows' size, from the measured tables: which transport leads at each payload size, where the lead passes to
/// another, whose rank moves most from the smallest size to the largest, and each transport's payload MB/s at each size (the HTML
/// exporter charts it).
/// </summary>
public static class PayloadTrend
{
    private static readonly CultureInfo Invariant = CultureInfo.InvariantCulture;

    /// <summary>
    /// A transport's row at a payload size (the one of its largest record count there), ranked by its time over its reference's — the
    /// same database work with no transport, so that a transport whose server reads ranges is not ranked by its cheaper reads — and
    /// by time per record where there is no reference.
    /// </summary>
    private static List<(int Payload, List<TransportSummary> Ranked)> BySize(IReadOnlyList<TransportSummary> summaries) =>
        [.. summaries.Where(s => !s.IsPeer && !s.Unranked).GroupBy(s => s.Key.PayloadBytes).OrderBy(g => g.Key)
            .Select(g => (g.Key, g.GroupBy(s => s.Key.WithoutPayload()).Select(t => t.MaxBy(s => s.Records)!)
                .OrderBy(s => s.PairedRatioToPipelined?.Mean ?? s.RatioToPipelined ?? double.MaxValue).ThenBy(s => s.Seconds.Mean / s.Records).ToList()))];

    private static string Size(int payload) => payload == 0 ? "no payload" : RunKey.PayloadSize(payload);

    /// <summary>The transport that costs least over its reference (the references aside) at each payload size measured, smallest first.</summary>
    public static List<(int PayloadBytes, string Transport)> Leaders(IReadOnlyList<TransportSummary> summaries) =>
        [.. BySize(summaries).Select(s => (s.Payload, Leader: s.Ranked.FirstOrDefault(r => !r.Key.IsReference)))
            .Where(s => s.Leader is not null).Select(s => (s.Payload, s.Leader!.Key.Transport))];

    /// <summary>
    /// The transport whose place among the transports moves most from the smallest payload size to the largest (of those that ran at
    /// both), with its places there (1: fastest); null under two sizes, or when no place moves.
    /// </summary>
    public static (string Transport, int From, int To, int Of)? MostMoved(IReadOnlyList<TransportSummary> summaries)
    {
        var sizes = BySize(summaries);
        if (sizes.Count < 2)
            return null;
        // Places among the transports that ran at both sizes only.
        var both = sizes[0].Ranked.Select(r => r.Key.WithoutPayload()).Intersect(sizes[^1].Ranked.Select(r => r.Key.WithoutPayload()))
            .Where(k => !k.IsReference).ToHashSet();
        var (first, last) = (sizes[0].Ranked.Where(r => both.Contains(r.Key.WithoutPayload())).ToList(), sizes[^1].Ranked.Where(r => both.Contains(r.Key.WithoutPayload())).ToList());
        var moves = first.Select((r, i) => (Row: r, From: i + 1, To: last.FindIndex(l => l.Key.WithoutPayload() == r.Key.WithoutPayload()) + 1)).ToList();
        return moves.Count >= 2 && moves.MaxBy(m => Math.Abs(m.To - m.From)) is { } most && most.To != most.From
            ? (most.Row.Key.Transport, most.From, most.To, moves.Count) : null;
    }

    /// <summary>The findings' lines about size; none unless the runs carried two payload sizes or more.</summary>
    public static List<string> Lines(IReadOnlyList<TransportSummary> summaries)
    {
        var sizes = BySize(summaries);
        if (sizes.Count < 2)
            return [];
        var leaders = Leaders(summaries);
        var lines = new List<string>();
        if (leaders.Count > 0)
        {
            // Runs of sizes with the same leader: "TcpClient2 at no payload and 1 KiB, GrpcStreaming at 16 KiB to 1 MiB".
            var spans = new List<(string Transport, List<int> Payloads)>();
            foreach (var (payload, leader) in leaders)
            {
                if (spans.Count > 0 && spans[^1].Transport == leader)
                    spans[^1].Payloads.Add(payload);
                else
                    spans.Add((leader, [payload]));
            }
            string At(List<int> payloads) => payloads.Count == 1 ? $"at {Size(payloads[0])}"
                : payloads.Count == 2 ? $"at {Size(payloads[0])} and {Size(payloads[1])}" : $"from {Size(payloads[0])} to {Size(payloads[^1])}";
            var line = spans.Count == 1
                ? $"By payload size: {spans[0].Transport} costs least over the same database work with no transport at every size measured ({Size(leaders[0].PayloadBytes)} to {Size(leaders[^1].PayloadBytes)})"
                : "By payload size, the transport that costs least over the same database work with no transport is " + string.Join(", ", spans.Select(s => $"{s.Transport} {At(s.Payloads)}"))
                  + "; the lead changes " + string.Join(" and ", spans.Zip(spans.Skip(1), (a, b) => $"between {Size(a.Payloads[^1])} and {Size(b.Payloads[0])}"));
            lines.Add(line + ".");
        }
        if (MostMoved(summaries) is { } most)
            lines.Add(string.Create(Invariant,
                $"The rank that moves most with size: {most.Transport}, {Ordinal(most.From)} of {most.Of} at {Size(sizes[0].Payload)} and {Ordinal(most.To)} at {Size(sizes[^1].Payload)}."));
        return lines;
    }

    private static string Ordinal(int n) => (n % 100) switch
    {
        11 or 12 or 13 => $"{n}th",
        _ => (n % 10) switch { 1 => $"{n}st", 2 => $"{n}nd", 3 => $"{n}rd", _ => $"{n}th" },
    };

    /// <summary>A transport's payload MB/s at one payload size, for the chart of throughput against size.</summary>
    /// <param name="Row">The transport's row without its payload: one line of the chart.</param>
    public sealed record MegabytesPoint(int PayloadBytes, RowKey Row, double MegabytesPerSecond);

    /// <summary>
    /// Each transport's payload MB/s at each payload size (its row of its largest record count there), in the order the rows rank;
    /// empty under two sizes with a payload (nothing to draw a line through).
    /// </summary>
    public static List<MegabytesPoint> MegabytesBySize(IReadOnlyList<TransportSummary> summaries)
    {
        var points = BySize(summaries).Where(s => s.Payload > 0)
            .SelectMany(s => s.Ranked.Select(r => new MegabytesPoint(s.Payload, r.Key.WithoutPayload(), r.PayloadMegabytesPerSecond ?? 0)))
            .Where(p => p.MegabytesPerSecond > 0).ToList();
        return points.Select(p => p.PayloadBytes).Distinct().Count() < 2 ? [] : points;
    }

}
