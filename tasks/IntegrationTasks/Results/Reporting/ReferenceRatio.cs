using System.Globalization;

namespace IntegrationTasks.Results;

/// <summary>
/// A transport's time over its reference's (PipelinedCopy, or PipelinedCopyRange), as the findings give it: the paired ratio (each
/// run over the reference run nearest to it in time, mean and 95% interval) where the runs were interleaved, else the ratio of the
/// means; always named for which it is.
/// </summary>
public sealed record ReferenceRatio(double Value, double? Ci95, bool Paired, string Reference)
{
    private static readonly CultureInfo Invariant = CultureInfo.InvariantCulture;

    /// <summary>The ratio of a summary; null for a reference itself, or without one in the run.</summary>
    public static ReferenceRatio? Of(TransportSummary summary) =>
        summary.Key.IsLimit ? null
        : summary.PairedRatioToPipelined is { } paired ? new(paired.Mean, paired.HasInterval ? paired.Ci95 : null, true, summary.Reference)
        : summary.RatioToPipelined is { } means ? new(means, null, false, summary.Reference)
        : null;

    public double Low => Value - (Ci95 ?? 0);
    public double High => Value + (Ci95 ?? 0);

    /// <summary>Its interval holds 1: no measurable difference from the reference.</summary>
    public bool WithinNoiseOfReference => Ci95 is not null && Low <= 1 && High >= 1;

    /// <summary>Both have intervals and they overlap: the two cannot be told apart by these runs.</summary>
    public bool WithinNoiseOf(ReferenceRatio other) => Ci95 is not null && other.Ci95 is not null && Low <= other.High && other.Low <= High;

    /// <summary>"1.07 ±0.03", "1.07 (no interval)" or "1.07" (of means), in <paramref name="format"/>.</summary>
    public string Figure(string format = "F2") =>
        Value.ToString(format, Invariant) + (Ci95 is { } ci ? " ±" + ci.ToString(format, Invariant) : Paired ? " (no interval)" : "");

    /// <summary>Which ratio it is, in words: "paired" or "ratio of means".</summary>
    public string Kind => Paired ? "paired" : "ratio of means";
}
