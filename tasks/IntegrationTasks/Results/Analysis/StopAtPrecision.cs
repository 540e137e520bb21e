using System.Globalization;
using IntegrationTasks.Transfer;

namespace IntegrationTasks.Results;

/// <summary>
/// How precisely the rounds so far know each transport's paired ratio to its reference (the report's "Paired × PipelinedCopy"):
/// the half-width of its 95 % interval as a percentage of its mean. An interleaved RunAll with StopAtPrecision=P stops its rounds
/// once every such ratio is known within ±P % (BenchmarkDotNet's way: repeat until the error is small, not a fixed count); two
/// RunAlls that each stop there give a ratio that agrees within about 1.4 × P % (√2 × P) 19 times in 20.
/// </summary>
public static class RatioPrecision
{
    /// <summary>StopAtPrecision as written ("2", "0.5"): a plain decimal number, read the same in every culture.</summary>
    public static bool TryParsePercent(string text, out double percent) =>
        double.TryParse(text, NumberStyles.AllowDecimalPoint, CultureInfo.InvariantCulture, out percent);

    /// <summary>The ratio known least precisely; <see cref="HalfWidthPercent"/> is infinite while it has too few runs for an interval.</summary>
    public sealed record Widest(string Transport, int Records, double Ratio, double HalfWidthPercent, int Runs)
    {
        public string Describe() => double.IsInfinity(HalfWidthPercent)
            ? string.Create(CultureInfo.InvariantCulture, $"{Transport} at {Records:N0} records, {Runs} paired run{(Runs == 1 ? "" : "s")} (no interval yet)")
            : string.Create(CultureInfo.InvariantCulture, $"{Transport} at {Records:N0} records, {Ratio:F3} ±{HalfWidthPercent:F1} %");
    }

    /// <summary>The least precise paired ratio of the verified runs; null when no run is paired with a reference (none ran, or not interleaved).</summary>
    public static Widest? Of(IEnumerable<Measurement> measurements) =>
        Summaries.Of(measurements.Where(m => m.Completed))
            .Where(s => s.PairedRatioToPipelined is { Mean: > 0 })
            .Select(s => s.PairedRatioToPipelined is { HasInterval: true } paired
                ? new Widest(s.Transport, s.Records, paired.Mean, paired.Ci95 / paired.Mean * 100, paired.Count)
                : new Widest(s.Transport, s.Records, s.PairedRatioToPipelined!.Mean, double.PositiveInfinity, s.PairedRatioToPipelined.Count))
            .MaxBy(w => w.HalfWidthPercent);

    /// <summary>
    /// The rounds in all that would bring this ratio within ±<paramref name="precisionPercent"/> % if its runs went on scattering as
    /// they have (the interval narrows as t/√n); null without an interval, or beyond ten million.
    /// </summary>
    public static int? RoundsNeeded(Widest widest, double precisionPercent)
    {
        if (double.IsInfinity(widest.HalfWidthPercent) || widest.Runs < Summary.MinimumForInterval)
            return null;
        var scatter = widest.HalfWidthPercent * Math.Sqrt(widest.Runs) / StudentT.Quantile(0.975, widest.Runs - 1); // % of the mean
        return MonotoneSearch.Fewest(widest.Runs, rounds => StudentT.Quantile(0.975, rounds - 1) * scatter / Math.Sqrt(rounds) <= precisionPercent);
    }

    /// <summary>"; at this scatter about 104 rounds in all would reach it", or nothing when that cannot be told.</summary>
    public static string RoundsNeededText(Widest widest, double precisionPercent) => RoundsNeeded(widest, precisionPercent) is { } rounds
        ? string.Create(CultureInfo.InvariantCulture, $"; at this scatter about {rounds:N0} rounds in all would reach it")
        : "";

    /// <summary>The report's line: what was asked, whether the rounds reached it, and the widest ratio they ended with.</summary>
    public static string ReportLine(double precisionPercent, IReadOnlyList<Measurement> measurements)
    {
        var rounds = measurements.Where(m => !m.Warmup).Select(m => m.Repetition).DefaultIfEmpty(0).Max();
        var asked = string.Create(CultureInfo.InvariantCulture, $"every paired ratio to the reference within ±{precisionPercent:G6} % (95 % interval)");
        return Of(measurements) switch
        {
            null => $"{asked} asked; no run was paired with a reference, so it was not judged ({rounds} rounds)",
            { } widest when widest.HalfWidthPercent <= precisionPercent => $"{asked}: reached after {rounds} rounds (the widest: {widest.Describe()})",
            { } widest => $"{asked}: not reached in {rounds} rounds (the widest: {widest.Describe()}){RoundsNeededText(widest, precisionPercent)} (-p:Repetitions)",
        };
    }
}

/// <summary>
/// Before each run of an interleaved RunAll with StopAtPrecision: at the first run of a round past <see cref="MinRounds"/>, judges the
/// rounds so far (<see cref="RatioPrecision"/>); once every paired ratio is within ±<see cref="PrecisionPercent"/> %, keeps the round it
/// stopped after, and every later run is skipped (<see cref="Skip"/>). Each run is a project instance of its own: the build's
/// <see cref="RunState"/> is what they share.
/// </summary>
public sealed class CheckRoundsPrecision : IntegrationTask
{
    [Required] public string ResultsFile { get; set; } = "";
    /// <summary>±this many % (StopAtPrecision, as given: "2", "0.5").</summary>
    [Required] public string PrecisionPercent { get; set; } = "";

    /// <summary>The run's round (0: the warm-ups, never skipped) and whether it is the round's first run.</summary>
    [Required] public int Round { get; set; }
    public bool FirstOfRound { get; set; }

    /// <summary>The most rounds (Repetitions), for the log's "Repetitions allows"; 0: not said.</summary>
    public int MaxRounds { get; set; }

    /// <summary>Rounds always run before the first judgement (at least <see cref="Summary.MinimumForInterval"/>).</summary>
    public int MinRounds { get; set; } = Summary.MinimumForInterval;

    [Output] public bool Skip { get; private set; }

    protected override Task ExecuteAsync(CancellationToken cancellationToken)
    {
        if (!RatioPrecision.TryParsePercent(PrecisionPercent, out var precision) || precision is not (> 0 and < double.PositiveInfinity))
            throw new IntegrationException(ErrorCodes.InvalidParameter,
                $"StopAtPrecision must be a percentage above 0, such as 2 for ±2 % (was '{PrecisionPercent}').");
        if (MinRounds < Summary.MinimumForInterval)
            throw new IntegrationException(ErrorCodes.InvalidParameter,
                $"MinRounds must be at least {Summary.MinimumForInterval} (fewer runs give no interval to judge); was {MinRounds}.");
        var state = RunState.For(BuildEngine, ResultsFile);
        if (state.StoppedAfterRound is { } stoppedAfter)
        {
            Skip = Round > stoppedAfter;
            return Task.CompletedTask;
        }
        var judged = Round - 1;
        if (!FirstOfRound || judged < MinRounds)
            return Task.CompletedTask;
        var widest = RatioPrecision.Of(state.Runs);
        if (widest is null)
        {
            Log.LogMessage(MessageImportance.High, "RunAll: StopAtPrecision has nothing to judge after round {0}: no run is paired with a reference (PipelinedCopy); every round runs.", judged);
            return Task.CompletedTask;
        }
        if (widest.HalfWidthPercent > precision)
        {
            var needed = RatioPrecision.RoundsNeededText(widest, precision);
            if (needed.Length > 0 && MaxRounds > 0)
                needed += string.Create(CultureInfo.InvariantCulture, $" (Repetitions allows {MaxRounds})");
            Log.LogMessage(MessageImportance.High, "RunAll: after round {0} the widest paired ratio is {1} (StopAtPrecision={2}): round {3} runs{4}.",
                judged, widest.Describe(), PrecisionPercent, Round, needed);
            return Task.CompletedTask;
        }
        state.StoppedAfterRound = judged;
        Log.LogMessage(MessageImportance.High,
            "RunAll: after round {0} every paired ratio to the reference is within ±{1} % (the widest: {2}): the rounds stop here (StopAtPrecision).",
            judged, PrecisionPercent, widest.Describe());
        Skip = true;
        return Task.CompletedTask;
    }
}
