using System.Globalization;
using IntegrationTasks.Planning;
using IntegrationTasks.Transfer;

namespace IntegrationTasks.Results;

/// <summary>
/// What a RunAll's runs are expected to take before any has been timed here: each transport's own cost per record (its definition's
/// PriorMicrosecondsPerRecord, read from a typical run of the suite; <see cref="DefaultMicrosecondsPerRecord"/> without one) plus what
/// every run adds around its transfer (emptying ClientTable, verifying every row, recording it). A prior, not a result: it only
/// sizes the plan and the time left until the runs themselves say more.
/// </summary>
public static class RunCostPrior
{
    public const double DefaultMicrosecondsPerRecord = 15;

    /// <summary>Emptying ClientTable and verifying every row, per record moved.</summary>
    public const double VerifyMicrosecondsPerRecord = 6;

    /// <summary>A transfer's cost per KiB of the rows' payload, beside its cost per record (a transport's MB/s at large rows).</summary>
    public const double TransferMicrosecondsPerPayloadKiB = 25;

    /// <summary>Emptying and verifying, per KiB of payload moved.</summary>
    public const double VerifyMicrosecondsPerPayloadKiB = 10;

    /// <summary>What a run costs whatever its size: its project instance, its progress line and its record.</summary>
    public const double RunOverheadSeconds = 0.1;

    /// <summary>What a RunAll costs before its first run whatever it runs: its checks, the data and the calibration.</summary>
    public const double BeforeRunsSeconds = 30;

    /// <summary>What it costs after its last run: the calibration again and the report.</summary>
    public const double AfterRunsSeconds = 15;

    /// <summary>What starting and stopping one server costs.</summary>
    public const double ServerSeconds = 2;

    /// <summary>How many seconds of runs the prior weighs as much as: the time left moves from the prior to the runs' own pace after about as long.</summary>
    public const double PriorWeightSeconds = 60;

    /// <summary>Each transport's prior cost per record, from its definition (a transport without one is left out: the default applies).</summary>
    public static Dictionary<string, double> PerRecord(IEnumerable<ITaskItem> definitions) =>
        definitions.Select(TransportDefinition.From).Where(d => d.PriorMicrosecondsPerRecord is not null)
            .GroupBy(d => d.Name, StringComparer.Ordinal)
            .ToDictionary(g => g.Key, g => g.First().PriorMicrosecondsPerRecord!.Value, StringComparer.Ordinal);

    public static double RunSeconds(IReadOnlyDictionary<string, double> perRecord, string transport, long records, int payloadBytes = 0) =>
        AroundTransferSeconds(records, payloadBytes) + records * (perRecord.GetValueOrDefault(transport, DefaultMicrosecondsPerRecord)
            + payloadBytes / 1024.0 * TransferMicrosecondsPerPayloadKiB) / 1e6;

    /// <summary>What a run adds around its transfer: emptying, verifying and recording.</summary>
    public static double AroundTransferSeconds(long records, int payloadBytes = 0) =>
        RunOverheadSeconds + records * (VerifyMicrosecondsPerRecord + payloadBytes / 1024.0 * VerifyMicrosecondsPerPayloadKiB) / 1e6;

    /// <summary>
    /// The time left: what the prior gives the runs still to do, scaled by how the runs so far kept to it — weighed against the prior
    /// itself (<see cref="PriorWeightSeconds"/>), so that the first runs, which compile and fill caches, do not set the pace alone —
    /// and what comes after the last run.
    /// </summary>
    /// <param name="plannedRunSeconds">The prior of every planned run (servers included, nothing before or after the runs).</param>
    /// <param name="doneSeconds">The prior of the runs done.</param>
    /// <param name="elapsed">The time since the runs began.</param>
    public static TimeSpan Left(double plannedRunSeconds, double doneSeconds, TimeSpan elapsed)
    {
        var pace = (elapsed.TotalSeconds + PriorWeightSeconds) / (doneSeconds + PriorWeightSeconds);
        return TimeSpan.FromSeconds(Math.Max(0, plannedRunSeconds - doneSeconds) * pace + AfterRunsSeconds);
    }
}

/// <summary>Where a RunAll is: the transport about to run, what is done, the time so far and an estimate of the time left.</summary>
public static class RunProgressEstimate
{
    public static string Describe(string transport, int ordinal, int of, IReadOnlyList<int> counts, int repetitions, int warmupRuns,
        TimeSpan? left, TimeSpan elapsed, int payloadBytes = 0)
    {
        var runs = counts.Count * repetitions + (warmupRuns > 0 ? warmupRuns : 0);
        var line = string.Create(CultureInfo.InvariantCulture,
            $"RunAll: {(of > 0 ? $"transport {ordinal} of {of}, " : "")}{transport}: {string.Join(" + ", counts.Select(c => c.ToString("N0", CultureInfo.InvariantCulture)))} records{Payload(payloadBytes)} × {repetitions} repetitions{WarmupText(warmupRuns)} ({runs} runs); {Duration(elapsed)} elapsed");
        return line + LeftText(left) + ".";
    }

    public static string WarmupText(int warmupRuns) => warmupRuns switch
    {
        0 => "",
        1 => " after a warm-up",
        _ => string.Create(CultureInfo.InvariantCulture, $" after {warmupRuns} warm-ups"),
    };

    /// <summary>The line before a run of an interleaved RunAll: its round, its place in the round, and the same estimate.</summary>
    public static string DescribeRun(string round, string position, string transport, int records, TimeSpan? left, TimeSpan elapsed,
        int payloadBytes = 0) =>
        string.Create(CultureInfo.InvariantCulture,
            $"RunAll {round}, run {position}: {transport}, {records:N0} records{Payload(payloadBytes)}; {Duration(elapsed)} elapsed") + LeftText(left) + ".";

    /// <summary>" of 256 KiB" after a record count whose rows carry a payload.</summary>
    private static string Payload(int payloadBytes) => payloadBytes > 0 ? $" of {RunKey.PayloadSize(payloadBytes)}" : "";

    private static string LeftText(TimeSpan? left) => left is { } span ? $", about {Duration(span)} left" : "";

    public static string Duration(TimeSpan span) => span.TotalSeconds < 60
        ? string.Create(CultureInfo.InvariantCulture, $"{span.TotalSeconds:F0} s")
        : string.Create(CultureInfo.InvariantCulture, $"{(int)span.TotalMinutes} min {span.Seconds} s");
}

/// <summary>RunAll's progress line before each transport, or before each run when interleaved (<see cref="RunProgressEstimate"/>).</summary>
public sealed class RunProgress : IntegrationTask
{
    [Required] public string Transport { get; set; } = "";

    /// <summary>By transport: the transport's place in the plan and how many it holds; its record counts, repetitions and warm-ups.</summary>
    public int Ordinal { get; set; }
    public int Of { get; set; }
    public string RecordCounts { get; set; } = "";
    public int Repetitions { get; set; }
    public bool Warmup { get; set; }
    public int WarmupRuns { get; set; } = SettingDefaults.WarmupRuns;

    /// <summary>Interleaved: the run's round (0: the warm-ups), its place in the round, the round's runs, its records and clients.</summary>
    public int Round { get; set; }
    public int RoundPosition { get; set; }
    public int RunsInRound { get; set; }
    public int Records { get; set; }
    public int Clients { get; set; } = 1;

    /// <summary>The run's rows' payload (its pass's), said after the record count.</summary>
    public int PayloadBytes { get; set; }

    /// <summary>The whole plan's expected seconds (<see cref="EstimateRunAll"/>'s PlannedSeconds); 0: no time left is said.</summary>
    public double PlannedSeconds { get; set; }

    /// <summary>Every transport's definition, for each one's prior cost per record (<see cref="RunCostPrior"/>).</summary>
    public ITaskItem[] Definitions { get; set; } = [];

    /// <summary>When RunAll started (round-trip UTC).</summary>
    [Required] public string StartedAt { get; set; } = "";
    public string? ResultsFile { get; set; }

    protected override Task ExecuteAsync(CancellationToken cancellationToken)
    {
        var perRecord = RunCostPrior.PerRecord(Definitions);
        var done = !string.IsNullOrEmpty(ResultsFile)
            ? RunState.For(BuildEngine, ResultsFile).Runs.Sum(m => RunCostPrior.RunSeconds(perRecord, m.Transport, m.Records, m.PayloadBytes ?? 0))
            : 0;
        var elapsed = DateTimeOffset.UtcNow - DateTimeOffset.Parse(StartedAt, CultureInfo.InvariantCulture, DateTimeStyles.RoundtripKind);
        TimeSpan? left = PlannedSeconds > 0 ? RunCostPrior.Left(PlannedSeconds, done, elapsed) : null;
        var round = Round == 0 ? "warm-ups" : string.Create(CultureInfo.InvariantCulture, $"round {Round} of {Repetitions}");
        var transport = Clients == 1 ? Transport : string.Create(CultureInfo.InvariantCulture, $"{Transport} ({Clients} clients)");
        Log.LogMessage(MessageImportance.High, "{0}", Ordinal == 0
            ? RunProgressEstimate.DescribeRun(round, string.Create(CultureInfo.InvariantCulture, $"{RoundPosition} of {RunsInRound}"), transport, Records, left, elapsed,
                PayloadBytes)
            : RunProgressEstimate.Describe(Transport, Ordinal, Of, RunMatrix.ParseRecordCounts([RecordCounts]), Repetitions,
                RunMatrix.WarmupCount(Warmup, WarmupRuns), left, elapsed, PayloadBytes));
        return Task.CompletedTask;
    }
}

/// <summary>
/// RunAll's plan and how long it should take, said before the first run: every planned run at its transport's mean time in the
/// newest dated results here (results-….json) where it was measured there, at its prior (<see cref="RunCostPrior"/>) where not, with
/// what every run and server adds around the transfers.
/// </summary>
public sealed class EstimateRunAll : IntegrationTask
{
    /// <summary>The plan's steps (PlanRunAll): its runs (Kind Run: metadata Transport, Records and PayloadBytes) and servers.</summary>
    [Required] public ITaskItem[] Steps { get; set; } = [];
    /// <summary>Where the dated copies of earlier reports are (HistoryDir): the newest of this results folder's gives each transport's time.</summary>
    [Required] public string HistoryDirectory { get; set; } = "";

    /// <summary>This run's results folder (ResultsDir): its name is what its dated copies are named after ("results", "load"…).</summary>
    public string ResultsDirectory { get; set; } = "results";

    /// <summary>Every transport's definition, for each one's prior cost per record.</summary>
    public ITaskItem[] Definitions { get; set; } = [];

    /// <summary>The plan's runs at their prior (<see cref="RunCostPrior"/>), for the progress lines' time left.</summary>
    [Output] public double PlannedSeconds { get; private set; }

    protected override Task ExecuteAsync(CancellationToken cancellationToken)
    {
        var plan = Steps.Where(s => s.GetMetadata("Kind") == "Run")
            .Select(s => (Transport: s.GetMetadata("Transport"), Run: new RunVolume(int.Parse(s.GetMetadata("Records"), CultureInfo.InvariantCulture),
                int.TryParse(s.GetMetadata("PayloadBytes"), NumberStyles.None, CultureInfo.InvariantCulture, out var payload) ? payload : 0)))
            .GroupBy(r => r.Transport, StringComparer.Ordinal).Select(g => (g.Key, Runs: g.Select(r => r.Run).ToList())).ToList();
        var runs = plan.Sum(p => p.Runs.Count);
        var records = plan.Sum(p => p.Runs.Sum(r => (long)r.Records));
        var payloadBytes = plan.Sum(p => p.Runs.Sum(r => (long)r.Records * r.PayloadBytes));
        var earlier = Directory.Exists(HistoryDirectory)
            ? new DirectoryInfo(HistoryDirectory).EnumerateFiles($"{RunState.HistoryName(ResultsDirectory)}-*.json").MaxBy(f => f.Name)
            : null;
        var measured = earlier is null ? [] : MeanSeconds(earlier.FullName);
        var perRecord = RunCostPrior.PerRecord(Definitions);
        var estimate = Estimate(plan, perRecord, measured);
        var servers = Steps.Count(s => s.GetMetadata("Kind") == "Server") * RunCostPrior.ServerSeconds;
        // The progress lines price the runs done at the prior, so the plan they compare with is priced the same way; the runs' pace
        // then corrects both. Servers started with their runs are in the pace, not in the plan.
        PlannedSeconds = plan.Sum(p => p.Runs.Sum(run => RunCostPrior.RunSeconds(perRecord, p.Key, run.Records, run.PayloadBytes)));
        var total = RunCostPrior.BeforeRunsSeconds + servers + estimate.Seconds + RunCostPrior.AfterRunsSeconds;
        var source = estimate.Known == 0 ? "each transport's prior cost per record"
            : string.Create(CultureInfo.InvariantCulture, $"{estimate.Known} of {plan.Count} transports at their times in {earlier!.Name}, the rest at their prior cost");
        Log.LogMessage(MessageImportance.High, "{0}", string.Create(CultureInfo.InvariantCulture,
            $"RunAll plan: {runs:N0} runs moving {records:N0} records{(payloadBytes > 0 ? $" ({payloadBytes / 1048576.0:N0} MiB of payload)" : "")} in all; about {RunProgressEstimate.Duration(TimeSpan.FromSeconds(total))} in all ({source})."));
        return Task.CompletedTask;
    }

    /// <summary>Each transport's mean seconds per run shape (record count and payload) over its measured runs in a results file (none when it cannot be read).</summary>
    internal static Dictionary<string, Dictionary<RunVolume, double>> MeanSeconds(string resultsFile)
    {
        try
        {
            return Results.ResultsFile.Load(resultsFile).Measurements.Where(m => m.Completed && !m.Warmup)
                .GroupBy(m => m.Transport, StringComparer.Ordinal)
                .ToDictionary(t => t.Key, t => t.GroupBy(m => new RunVolume(m.Records, m.PayloadBytes ?? 0)).ToDictionary(g => g.Key, g => g.Average(m => m.ElapsedSeconds)),
                    StringComparer.Ordinal);
        }
        catch (IntegrationException)
        {
            return [];
        }
    }

    /// <summary>
    /// The plan's runs' seconds: each run at its transport's mean where measured with the same payload (the nearest record count's,
    /// scaled by records) plus what a run adds around its transfer, else at its prior. A transport counts as known when all its runs were.
    /// </summary>
    internal static (double Seconds, int Known) Estimate(IReadOnlyList<(string Transport, List<RunVolume> Runs)> plan, IReadOnlyDictionary<string, double> perRecord,
        IReadOnlyDictionary<string, Dictionary<RunVolume, double>> measured)
    {
        var seconds = 0.0;
        var known = 0;
        foreach (var (transport, runs) in plan)
        {
            var means = measured.GetValueOrDefault(transport) ?? [];
            var allMeasured = true;
            foreach (var run in runs)
            {
                var samePayload = means.Keys.Where(k => k.PayloadBytes == run.PayloadBytes).ToList();
                if (samePayload.Count == 0)
                {
                    allMeasured = false;
                    seconds += RunCostPrior.RunSeconds(perRecord, transport, run.Records, run.PayloadBytes);
                    continue;
                }
                var nearest = samePayload.MinBy(k => Math.Abs(Math.Log((double)k.Records / run.Records)));
                seconds += means[nearest] * run.Records / nearest.Records + RunCostPrior.AroundTransferSeconds(run.Records, run.PayloadBytes);
            }
            if (allMeasured && runs.Count > 0)
                known++;
        }
        return (seconds, known);
    }
}

/// <summary>One planned run's shape, for its expected time: its records and their payload's bytes (0: none).</summary>
public readonly record struct RunVolume(int Records, int PayloadBytes = 0);
