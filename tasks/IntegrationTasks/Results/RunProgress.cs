using System.Globalization;
using IntegrationTasks.Common;
using IntegrationTasks.Transfer;
using Microsoft.Build.Framework;

namespace IntegrationTasks.Results;

/// <summary>Where a RunAll is: the transport about to run, what is done, the time so far and an estimate of the time left.</summary>
public static class RunProgressEstimate
{
    /// <summary>
    /// The records every run of the plan moves (each transport's counts × (repetitions + warm-up)); the time left is the time so far
    /// scaled by the records still to move, which the runs so far allow once one has finished.
    /// </summary>
    public static string Describe(string transport, int ordinal, int of, IReadOnlyList<int> counts, int repetitions, int warmupRuns,
        long plannedRecords, long recordsDone, TimeSpan elapsed)
    {
        var runsEach = repetitions + warmupRuns;
        var line = string.Create(CultureInfo.InvariantCulture,
            $"RunAll: {(of > 0 ? $"transport {ordinal} of {of}, " : "")}{transport}: {string.Join(" + ", counts.Select(c => c.ToString("N0", CultureInfo.InvariantCulture)))} records × {repetitions} repetitions{WarmupText(warmupRuns)} ({counts.Count * runsEach} runs); {Duration(elapsed)} elapsed");
        if (recordsDone > 0 && plannedRecords > recordsDone)
            line += $", about {Duration(elapsed * ((double)(plannedRecords - recordsDone) / recordsDone))} left (from the runs so far)";
        return line + ".";
    }

    public static string WarmupText(int warmupRuns) => warmupRuns switch
    {
        0 => "",
        1 => " after a warm-up",
        _ => string.Create(CultureInfo.InvariantCulture, $" after {warmupRuns} warm-ups"),
    };

    /// <summary>The line before a run of an interleaved RunAll: its round, its place in the round, and the same estimate.</summary>
    public static string DescribeRun(string round, string position, string transport, int records, long plannedRecords, long recordsDone, TimeSpan elapsed)
    {
        var line = string.Create(CultureInfo.InvariantCulture,
            $"RunAll {round}, run {position}: {transport}, {records:N0} records; {Duration(elapsed)} elapsed");
        if (recordsDone > 0 && plannedRecords > recordsDone)
            line += $", about {Duration(elapsed * ((double)(plannedRecords - recordsDone) / recordsDone))} left (from the runs so far)";
        return line + ".";
    }

    public static string Duration(TimeSpan span) => span.TotalSeconds < 60
        ? string.Create(CultureInfo.InvariantCulture, $"{span.TotalSeconds:F0} s")
        : string.Create(CultureInfo.InvariantCulture, $"{(int)span.TotalMinutes} min {span.Seconds} s");
}

/// <summary>RunAll's progress line before each transport (<see cref="RunProgressEstimate"/>).</summary>
public sealed class RunProgress : IntegrationTask
{
    [Required] public string Transport { get; set; } = "";
    public int Ordinal { get; set; }
    public int Of { get; set; }
    [Required] public string RecordCounts { get; set; } = "";
    public int Repetitions { get; set; }
    public bool Warmup { get; set; }
    public int WarmupRuns { get; set; } = 1;

    /// <summary>Every transport's record counts ('+'-joined), to know the whole plan's records.</summary>
    public string[] Plan { get; set; } = [];

    /// <summary>Interleaved: every planned run's records (PlanRounds', with the reference's extra runs); 0: from <see cref="Plan"/>.</summary>
    public long PlannedRecords { get; set; }

    /// <summary>When RunAll started (round-trip UTC).</summary>
    [Required] public string StartedAt { get; set; } = "";
    public string? ResultsFile { get; set; }

    /// <summary>Interleaved: the round ("round 2 of 5", "warm-ups") and the run's place in it ("3 of 7"); the line is then the run's.</summary>
    public string Round { get; set; } = "";
    public string RoundPosition { get; set; } = "";

    protected override Task ExecuteAsync(CancellationToken cancellationToken)
    {
        var counts = PlanRuns.ParseRecordCounts([RecordCounts]);
        var warmups = PlanRuns.WarmupCount(Warmup, WarmupRuns);
        var runsEach = Repetitions + warmups;
        var planned = PlannedRecords > 0 ? PlannedRecords : Plan.Sum(p => PlanRuns.ParseRecordCounts([p]).Sum(c => (long)c)) * runsEach;
        var done = !string.IsNullOrEmpty(ResultsFile) && File.Exists(ResultsFile) ? MeasurementLog.Read(ResultsFile).Sum(m => (long)m.Records) : 0;
        var elapsed = DateTimeOffset.UtcNow - DateTimeOffset.Parse(StartedAt, CultureInfo.InvariantCulture, DateTimeStyles.RoundtripKind);
        Log.LogMessage(MessageImportance.High, "{0}", Round.Length > 0
            ? RunProgressEstimate.DescribeRun(Round, RoundPosition, Transport, counts.Sum(), planned, done, elapsed)
            : RunProgressEstimate.Describe(Transport, Ordinal, Of, counts, Repetitions, warmups, planned, done, elapsed));
        return Task.CompletedTask;
    }
}

/// <summary>
/// RunAll's plan, with how long it should take where an earlier run here measured the same transports (the newest dated
/// results-….json in the results folder): each planned run at its transport's mean time there, a missing record count scaled
/// linearly from the nearest one measured.
/// </summary>
public sealed class EstimateRunAll : IntegrationTask
{
    /// <summary>The transports to run (item spec), each with its RecordCounts ('+'-joined).</summary>
    [Required] public ITaskItem[] Transports { get; set; } = [];
    public int Repetitions { get; set; }
    public bool Warmup { get; set; }
    public int WarmupRuns { get; set; } = 1;
    [Required] public string ResultsDirectory { get; set; } = "";

    /// <summary>The client counts each record count runs at (-p:Clients=1+4); a transport with OneClient (the peer) runs at one.</summary>
    public string[] ClientCounts { get; set; } = ["1"];
    public int BatchSize { get; set; } = 1;

    protected override Task ExecuteAsync(CancellationToken cancellationToken)
    {
        var runsEach = Repetitions + PlanRuns.WarmupCount(Warmup, WarmupRuns);
        var clientCounts = Counts.Parse(ClientCounts, "Clients");
        var plan = Transports.Select(t => (t.ItemSpec, Counts: AtClientCounts(PlanRuns.ParseRecordCounts([t.GetMetadata("RecordCounts")]),
            t.GetMetadata("OneClient") == "true" ? [1] : clientCounts, BatchSize))).ToList();
        var runs = plan.Sum(p => p.Counts.Count) * runsEach;
        var records = plan.Sum(p => p.Counts.Sum(c => (long)c)) * runsEach;
        var line = string.Create(CultureInfo.InvariantCulture, $"RunAll plan: {runs:N0} runs moving {records:N0} records in all");
        var earlier = Directory.Exists(ResultsDirectory)
            ? new DirectoryInfo(ResultsDirectory).EnumerateFiles("results-*.json").MaxBy(f => f.Name)
            : null;
        if (earlier is not null && Estimate(plan, runsEach, earlier.FullName) is { } estimate)
            line += string.Create(CultureInfo.InvariantCulture,
                $"; about {RunProgressEstimate.Duration(estimate.Seconds)} of transfers by {earlier.Name} ({estimate.Known} of {plan.Count} transports measured there)");
        else
            line += "; no earlier results here to estimate its time from";
        Log.LogMessage(MessageImportance.High, "{0}.", line);
        return Task.CompletedTask;
    }

    /// <summary>Each record count once per client count it runs at, as PlanRuns plans them (a count with fewer batches than clients is not run).</summary>
    internal static List<int> AtClientCounts(IReadOnlyList<int> recordCounts, IReadOnlyList<int> clientCounts, int batchSize) =>
        [.. recordCounts.SelectMany(records => clientCounts.Where(clients => clients <= records / Math.Max(batchSize, 1)).Select(_ => records))];

    internal static (TimeSpan Seconds, int Known)? Estimate(IReadOnlyList<(string Transport, List<int> Counts)> plan, int runsEach, string resultsFile)
    {
        List<Measurement> measured;
        try
        {
            measured = Comparison.Load(resultsFile).Measurements.Where(m => m.Completed && !m.Warmup).ToList();
        }
        catch (IntegrationException)
        {
            return null;
        }
        var seconds = 0.0;
        var known = 0;
        foreach (var (transport, counts) in plan)
        {
            var means = measured.Where(m => m.Transport == transport).GroupBy(m => m.Records)
                .ToDictionary(g => g.Key, g => g.Average(m => m.ElapsedSeconds));
            if (means.Count == 0)
                continue;
            known++;
            foreach (var count in counts)
            {
                var nearest = means.Keys.MinBy(k => Math.Abs(Math.Log((double)k / count)));
                seconds += means[nearest] * count / nearest * runsEach;
            }
        }
        return known == 0 ? null : (TimeSpan.FromSeconds(seconds), known);
    }
}
