using System.Diagnostics;
using HdrHistogram;
using HdrHistogram.Utilities;

namespace IntegrationTasks.Transfer;

/// <summary>
/// How long each batch waited, from its request leaving the client to its transaction committing — and, in a second histogram, to
/// its reply having been fully received (what the transport alone took, before the import) — recorded in HdrHistograms
/// (microseconds, 1 µs to 1 hour, 3 significant digits): every batch, not a sample, so the tail percentiles are exact to 0.1 %.
/// A batch asked for again after a break counts from its last request.
/// </summary>
public sealed class BatchLatency(int totalBatches, double ratePerSecond = 0)
{
    public const long HighestMicroseconds = 3_600_000_000;

    /// <summary>Open loop: batches per second this client sends on a fixed schedule (0: closed loop, each as soon as it may).</summary>
    public double RatePerSecond { get; } = ratePerSecond;

    private long _scheduleStart;
    private int _turns;

    private readonly long[] _sentAt = new long[totalBatches];
    private readonly LongHistogram _histogram = NewHistogram();
    private readonly LongHistogram _replies = NewHistogram();

    public static LongHistogram NewHistogram() => new(1, HighestMicroseconds, 3);

    /// <summary>The clock, in Stopwatch ticks (tests set their own).</summary>
    internal Func<long> Now { get; init; } = Stopwatch.GetTimestamp;

    /// <summary>Called by a transport as the batch's request goes out (a call started, a frame written, a message published).</summary>
    public void Sent(int batch) => Volatile.Write(ref _sentAt[batch], Now());

    /// <summary>
    /// Closed loop: marks the batch sent now. Open loop: waits for this client's next slot on its fixed schedule and counts the batch
    /// from the slot — the time it was meant to go — so that a server that stalls cannot hide its stall by holding the sender back
    /// (coordinated omission, corrected as wrk2 does). A sender already late for its slot does not wait; its batch still counts from it.
    /// </summary>
    public async ValueTask SendTurnAsync(int batch, CancellationToken cancellationToken)
    {
        if (RatePerSecond <= 0)
        {
            Sent(batch);
            return;
        }
        var now = Now();
        Interlocked.CompareExchange(ref _scheduleStart, now, 0);
        var turn = Interlocked.Increment(ref _turns) - 1;
        var slot = Volatile.Read(ref _scheduleStart) + (long)(turn * Stopwatch.Frequency / RatePerSecond);
        if (slot > now)
            await Task.Delay(TimeSpan.FromSeconds((slot - now) / (double)Stopwatch.Frequency), cancellationToken).ConfigureAwait(false);
        Volatile.Write(ref _sentAt[batch], slot);
    }

    /// <summary>Called once the batch's transaction committed; a batch whose sending was not marked is not counted.</summary>
    internal void Committed(int batch) => Record(_histogram, batch);

    /// <summary>Called by a transport once the batch's reply is wholly in the client (parsed or buffered), before its import.</summary>
    public void Received(int batch) => Record(_replies, batch);

    private void Record(LongHistogram histogram, int batch)
    {
        var sentAt = Volatile.Read(ref _sentAt[batch]);
        if (sentAt == 0)
            return;
        var microseconds = (long)((Now() - sentAt) * 1_000_000.0 / Stopwatch.Frequency);
        lock (histogram)
            histogram.RecordValue(Math.Clamp(microseconds, 1, HighestMicroseconds));
    }

    /// <summary>The figures and the whole histogram (to be merged exactly with other runs'); null when no batch was measured.</summary>
    public LatencySummary? Summarize() => Summarize(_histogram);

    /// <summary>Request sent → reply received, as <see cref="Summarize()"/>; null where the transport does not mark its replies.</summary>
    public LatencySummary? SummarizeReplies() => Summarize(_replies);

    private static LatencySummary? Summarize(LongHistogram histogram)
    {
        lock (histogram)
            return histogram.TotalCount == 0 ? null : LatencySummary.Of(histogram);
    }
}

/// <summary>Batch latency percentiles in milliseconds, with the histogram they come from (compressed, base64).</summary>
public sealed record LatencySummary
{
    public long Batches { get; init; }
    public double P50Ms { get; init; }
    public double P90Ms { get; init; }
    public double P99Ms { get; init; }
    public double P999Ms { get; init; }
    public double MaxMs { get; init; }

    /// <summary>HdrHistogram's compressed V2 encoding, base64: histograms of any runs, from any machine, add up exactly.</summary>
    public string Histogram { get; init; } = "";

    public static LatencySummary Of(HistogramBase histogram)
    {
        var buffer = ByteBuffer.Allocate(histogram.GetNeededByteBufferCapacity());
        var length = HistogramEncoding.EncodeIntoCompressedByteBuffer(histogram, buffer);
        // Read back through the buffer's own cursor (its array is not exposed in this build of the library).
        buffer.Position = 0;
        var bytes = new byte[length];
        for (var i = 0; i < length; i++)
            bytes[i] = buffer.Get();
        return new LatencySummary
        {
            Batches = histogram.TotalCount,
            P50Ms = Ms(histogram.GetValueAtPercentile(50)),
            P90Ms = Ms(histogram.GetValueAtPercentile(90)),
            P99Ms = Ms(histogram.GetValueAtPercentile(99)),
            P999Ms = Ms(histogram.GetValueAtPercentile(99.9)),
            MaxMs = Ms(histogram.GetMaxValue()),
            Histogram = Convert.ToBase64String(bytes, 0, length),
        };
    }

    /// <summary>The runs' histograms added together (null when none has one).</summary>
    public static LatencySummary? Merge(IEnumerable<LatencySummary?> summaries)
    {
        LongHistogram? total = null;
        foreach (var summary in summaries)
        {
            if (summary is not { Histogram.Length: > 0 })
                continue;
            (total ??= BatchLatency.NewHistogram()).Add(summary.Decode());
        }
        return total is null ? null : Of(total);
    }

    private HistogramBase Decode() => HistogramEncoding.DecodeFromCompressedByteBuffer(ByteBuffer.Allocate(Convert.FromBase64String(Histogram)), 0);

    /// <summary>The latency at each percentile (0–100), in ms, read from the histogram itself: a distribution chart's points.</summary>
    public IReadOnlyList<(double Percentile, double Ms)> ValuesAtPercentiles(IEnumerable<double> percentiles)
    {
        var histogram = Decode();
        return [.. percentiles.Select(p => (p, Ms(histogram.GetValueAtPercentile(p))))];
    }

    private static double Ms(long microseconds) => microseconds / 1000.0;
}
