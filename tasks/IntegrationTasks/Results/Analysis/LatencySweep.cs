using IntegrationTasks.Transfer;

namespace IntegrationTasks.Results;

/// <summary>One transport's time at one added round trip.</summary>
public sealed record LatencyPoint(double LatencyMs, Summary Seconds);

/// <summary>
/// A transport measured at several added round trips (the LatencySweep target): its points, and the line through them —
/// the slope, in seconds per millisecond of round trip, is the number of round trips the transfer waits for one after
/// another (÷ 1000): lock-step pays one per batch, a pipelined transport only a few.
/// </summary>
public sealed record LatencyCurve(string Transport, int Records, IReadOnlyList<LatencyPoint> Points, double SecondsAtZero, double SecondsPerMs)
{
    /// <summary>The round trips waited for in sequence, as the slope says.</summary>
    public double SequentialRoundTrips => SecondsPerMs * 1000;
}

/// <summary>The runs of a latency sweep, a curve per transport and record count.</summary>
public static class LatencySweep
{
    public static List<LatencyCurve> Curves(IEnumerable<Measurement> measurements) =>
        measurements.Where(m => !m.Warmup && m.LatencyMs is not null).GroupBy(m => (m.Transport, m.Records))
            .Where(g => g.Select(m => m.LatencyMs).Distinct().Count() > 1)
            .Select(g =>
            {
                var points = g.GroupBy(m => m.LatencyMs!.Value).OrderBy(p => p.Key)
                    .Select(p => new LatencyPoint(p.Key, Summary.Of(p.Select(m => m.ElapsedSeconds).ToList()))).ToList();
                var runs = g.Select(m => (X: m.LatencyMs!.Value, Y: m.ElapsedSeconds)).ToList();
                var meanX = runs.Average(r => r.X);
                var meanY = runs.Average(r => r.Y);
                var sxx = runs.Sum(r => (r.X - meanX) * (r.X - meanX));
                var slope = sxx > 0 ? runs.Sum(r => (r.X - meanX) * (r.Y - meanY)) / sxx : 0;
                return new LatencyCurve(g.Key.Transport, g.Key.Records, points, meanY - slope * meanX, slope);
            })
            .OrderBy(c => c.SecondsPerMs).ToList();
}
