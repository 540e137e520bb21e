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
    public static string Describe(string transport, int ordinal, int of, IReadOnlyList<int> counts, int repetitions, bool warmup,
        long plannedRecords, long recordsDone, TimeSpan elapsed)
    {
        var runsEach = repetitions + (warmup ? 1 : 0);
        var line = string.Create(CultureInfo.InvariantCulture,
            $"RunAll: {(of > 0 ? $"transport {ordinal} of {of}, " : "")}{transport}: {string.Join(" + ", counts.Select(c => c.ToString("N0", CultureInfo.InvariantCulture)))} records × {repetitions} repetitions{(warmup ? " after a warm-up" : "")} ({counts.Count * runsEach} runs); {Duration(elapsed)} elapsed");
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

    /// <summary>Every transport's record counts ('+'-joined), to know the whole plan's records.</summary>
    public string[] Plan { get; set; } = [];

    /// <summary>When RunAll started (round-trip UTC).</summary>
    [Required] public string StartedAt { get; set; } = "";
    public string? ResultsFile { get; set; }

    protected override Task ExecuteAsync(CancellationToken cancellationToken)
    {
        var counts = PlanRuns.ParseRecordCounts([RecordCounts]);
        var runsEach = Repetitions + (Warmup ? 1 : 0);
        var planned = Plan.Sum(p => PlanRuns.ParseRecordCounts([p]).Sum(c => (long)c)) * runsEach;
        var done = !string.IsNullOrEmpty(ResultsFile) && File.Exists(ResultsFile) ? MeasurementLog.Read(ResultsFile).Sum(m => (long)m.Records) : 0;
        var elapsed = DateTimeOffset.UtcNow - DateTimeOffset.Parse(StartedAt, CultureInfo.InvariantCulture, DateTimeStyles.RoundtripKind);
        Log.LogMessage(MessageImportance.High, "{0}", RunProgressEstimate.Describe(Transport, Ordinal, Of, counts, Repetitions, Warmup, planned, done, elapsed));
        return Task.CompletedTask;
    }
}
