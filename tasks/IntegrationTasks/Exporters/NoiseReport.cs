using IntegrationTasks.Transfer;

using IntegrationTasks.Results;

namespace IntegrationTasks.Exporters;

/// <summary>The report's section on the machine's noise: the calibration's readings beside the spread of the transports' own runs.</summary>
public static class NoiseReport
{
    private static System.Globalization.CultureInfo Invariant => ReportTable.Invariant;

    public static readonly IReadOnlyList<ReportColumn<NoiseReading>> Columns =
    [
        new("loop", "Loop", r => r.Loop, Numeric: false),
        new("phase", "When", r => r.Phase == "Before" ? "before the runs" : "after the runs", Numeric: false),
        new("chunks", "Chunks", r => r.Chunks.ToString(Invariant)),
        new("meanMs", "Mean ms a chunk", r => r.MeanMs.ToString("F2", Invariant)),
        new("spreadPercent", "Spread (std dev / mean, %)", r => r.SpreadPercent.ToString("F1", Invariant)),
        new("minMs", "Min ms", r => r.MinMs.ToString("F2", Invariant)),
        new("maxMs", "Max ms", r => r.MaxMs.ToString("F2", Invariant)),
    ];

    /// <summary>The transports' own spread: each row's standard deviation over its mean (rows with an interval), the median of them.</summary>
    public static double? TransportSpreadPercent(IReadOnlyList<TransportSummary> rows)
    {
        var spreads = rows.Where(r => r.Seconds.HasInterval && r.Seconds.Mean > 0).Select(r => r.Seconds.StdDev / r.Seconds.Mean * 100).Order().ToList();
        return spreads.Count > 0 ? Summary.Quantile(spreads, 0.5) : null;
    }

    /// <summary>
    /// The calibration before and after the runs, beside the transports' spread, and its warning; with <paramref name="diagnostics"/>
    /// also what explains this machine's noise: the JIT's share of the measured runs, the spells of the runs in the order they ran
    /// and the hypervisor's steal, and how PostgreSQL's database loop is judged.
    /// </summary>
    public static string Markdown(IReadOnlyList<NoiseReading> readings, IReadOnlyList<TransportSummary> rows, IReadOnlyList<Measurement>? runs = null,
        bool diagnostics = false)
    {
        if (readings.Count == 0)
            return "";
        var md = new System.Text.StringBuilder("\n## The machine's noise\n\n");
        md.Append("A fixed CPU loop (in registers), a memory loop (200,000 dependent reads at random places in 64 MB a chunk, past every cache), ");
        md.Append("a database loop (2,000 lookups by ID on the server's database a chunk) and a write loop (ten batches of 1,000 records a chunk inserted on the ");
        md.Append("client's database, each in one transaction, as every run commits its batches), each run untimed for a second (the JIT's), then timed in chunks for about a second ");
        md.Append("before the first run and after the last: what this machine does to work that is the same every time.\n\n");
        md.Append(ReportTable.Markdown(Columns, readings));
        if (TransportSpreadPercent(rows) is { } spread)
            md.Append(string.Create(Invariant, $"\nThe transports' runs varied by {spread:F1} % (the median over the rows of std dev / mean)."))
                // Not the write loop's spread: its chunks differ by where the checkpoints fall (wide even on a quiet machine).
                .Append(readings.Where(r => r.Loop != MachineNoise.WriteLoop).DefaultIfEmpty().Max(r => r?.SpreadPercent ?? 0) is var noisiest && spread > 2 * noisiest
                    ? " That is more than the loops' spread: the runs' own variation (garbage collection, scheduling, the database) is most of it.\n"
                    : " The loops varied about as much: much of the runs' spread is the machine's.\n");
        if (diagnostics)
            md.Append(JitSentence(rows)).Append(SpellsSentence(Spells.Of(runs ?? [])));
        var warnings = MachineNoise.Warnings(readings);
        var roundTrips = diagnostics && readings.Any(MachineNoise.IsRoundTripLoop);
        if (roundTrips && readings.Any(r => MachineNoise.IsRoundTripLoop(r) && r.Provider == nameof(Data.DatabaseProvider.PostgreSql)))
            md.Append(string.Create(Invariant, $"\nOn PostgreSQL each lookup of the database loop is a round trip to a backend process, and where the scheduler puts the two decides its speed: measured with nothing else running (eight RunAlls, each on a fresh server), it varied by 10–23 % within a reading and took 67–122 ms a chunk from one reading to the next. Its spread is judged at {MachineNoise.NoisyRoundTripPercent:F0} %, its drift not at all.\n"));
        if (roundTrips && readings.Any(r => MachineNoise.IsRoundTripLoop(r) && r.Provider == nameof(Data.DatabaseProvider.MariaDb)))
            md.Append(string.Create(Invariant, $"\nOn MariaDB each lookup of the database loop is a round trip to the server too; its spread is judged as PostgreSQL's, at {MachineNoise.NoisyRoundTripPercent:F0} %, its drift not at all (thresholds measured on PostgreSQL).\n"));
        md.Append(warnings.Count == 0
            ? string.Create(Invariant, $"\nQuiet enough: no loop varied by more than its threshold ({Thresholds(readings)}) or moved by more than {MachineNoise.DriftPercent:F0} % between before and after (the write loop {MachineNoise.WriteDriftPercent:F0} %).\n")
            : $"\n**Warning ({ErrorCodes.MachineNoisy}): the machine was noisy during this run** — {NoiseWarning.Describe(warnings)}. Read small differences between transports with care.\n");
        return md.ToString();
    }

    /// <summary>Each loop's threshold as the readings were judged by it (the write loop's is its own database's, which may not be the server's).</summary>
    private static string Thresholds(IReadOnlyList<NoiseReading> readings) => string.Join(", ", readings.DistinctBy(r => r.Loop).Select(r =>
        string.Create(Invariant, $"{(r.Loop == MachineNoise.Cpu ? "CPU" : r.Loop.Replace(" loop", "", StringComparison.Ordinal).ToLowerInvariant())} {MachineNoise.NoisyPercentOf(r):F0} %")));

    /// <summary>
    /// How the machine's speed moved across an interleaved RunAll, from its measured runs in the order they ran: each run's deviation
    /// from its own transport's mean (log of time), correlated with the next run's and with its own deviation in client CPU.
    /// </summary>
    /// <param name="Runs">Runs that went into it.</param>
    /// <param name="NextRunCorrelation">Between each run's deviation and the next one's.</param>
    /// <param name="CpuCorrelation">Between a run's deviation in time and in its client's CPU (null where not every run has both).</param>
    /// <param name="RunSeconds">Median time of one run.</param>
    /// <param name="RoundSeconds">Median time from a round's first run's end to its last one's.</param>
    /// <param name="Steal">The hypervisor's steal during the runs, where every run has it.</param>
    public sealed record Spells(int Runs, double NextRunCorrelation, double? CpuCorrelation, double RunSeconds, double RoundSeconds, StealFigures? Steal = null)
    {
        /// <summary>Fewer runs than this (or fewer than two per transport) say nothing about spells.</summary>
        public const int MinimumRuns = 12;

        public static Spells? Of(IReadOnlyList<Measurement> runs)
        {
            var measured = runs.Where(r => r is { Warmup: false, Completed: true, RoundSeed: not null } && r.ElapsedSeconds > 0).ToList();
            var groups = measured.GroupBy(r => (r.Transport, r.Records, r.Clients, r.ServerWork, r.Provider, r.PayloadBytes)).Where(g => g.Count() >= 2).ToList();
            if (groups.Count < 2 || groups.Sum(g => g.Count()) < MinimumRuns)
                return null;
            var deviations = groups.SelectMany(g =>
            {
                var meanLog = g.Average(r => Math.Log(r.ElapsedSeconds));
                var meanCpu = g.All(r => r.ClientCpuSeconds > 0) ? g.Average(r => Math.Log(r.ClientCpuSeconds)) : (double?)null;
                return g.Select(r => (Run: r, Time: Math.Log(r.ElapsedSeconds) - meanLog, Cpu: meanCpu is { } m ? Math.Log(r.ClientCpuSeconds) - m : (double?)null));
            }).OrderBy(d => d.Run.Timestamp).ToList();
            var times = deviations.Select(d => d.Time).ToList();
            var next = Correlation(times.SkipLast(1).ToList(), times.Skip(1).ToList());
            var cpu = deviations.All(d => d.Cpu is not null) ? Correlation(times, [.. deviations.Select(d => d.Cpu!.Value)]) : null;
            var rounds = deviations.GroupBy(d => d.Run.Repetition).Where(g => g.Count() > 1)
                .Select(g => (g.Max(d => d.Run.Timestamp) - g.Min(d => d.Run.Timestamp)).TotalSeconds).Order().ToList();
            StealFigures? steal = null;
            if (deviations.All(d => d.Run.HostStealSeconds is not null))
            {
                // Steal per second of run: a long run meets more of it whatever the machine did.
                var perSecond = deviations.Select(d => d.Run.HostStealSeconds!.Value / d.Run.ElapsedSeconds).ToList();
                steal = new StealFigures(deviations.Sum(d => d.Run.HostStealSeconds!.Value) / deviations.Sum(d => d.Run.ElapsedSeconds), perSecond.Max(),
                    Correlation(times, perSecond));
            }
            return next is null ? null : new Spells(deviations.Count, next.Value, cpu,
                Summary.Quantile([.. measured.Select(r => r.ElapsedSeconds).Order()], 0.5), rounds.Count > 0 ? Summary.Quantile(rounds, 0.5) : 0, steal);
        }

        /// <summary>Pearson's r; null where either side does not vary.</summary>
        public static double? Correlation(IReadOnlyList<double> a, IReadOnlyList<double> b)
        {
            var (meanA, meanB) = (a.Average(), b.Average());
            double covariance = 0, varianceA = 0, varianceB = 0;
            for (var i = 0; i < a.Count; i++)
            {
                covariance += (a[i] - meanA) * (b[i] - meanB);
                varianceA += (a[i] - meanA) * (a[i] - meanA);
                varianceB += (b[i] - meanB) * (b[i] - meanB);
            }
            // Below this a side is constant but for rounding (deviations of logs of equal times are ~1e-16).
            const double none = 1e-18;
            return varianceA > none && varianceB > none ? covariance / Math.Sqrt(varianceA * varianceB) : null;
        }
    }

    /// <summary>The hypervisor's steal during an interleaved RunAll's measured runs.</summary>
    /// <param name="PerSecond">Steal over the runs' time: CPU-seconds a second of run, summed over the machine's CPUs.</param>
    /// <param name="MostPerSecond">The same in the run that met the most.</param>
    /// <param name="Correlation">Between a run's deviation in time and its steal a second (null where the steal did not vary).</param>
    public sealed record StealFigures(double PerSecond, double MostPerSecond, double? Correlation);

    /// <summary>Above this, a run's neighbours in time shared its luck: the machine moved in spells longer than a run.</summary>
    public const double SpellCorrelation = 0.3;

    /// <summary>Above this, slow runs spent more CPU on the same work: the machine ran slower, rather than the runs waiting.</summary>
    public const double CpuBoundCorrelation = 0.7;

    /// <summary>What the order of the runs says about the machine: whether its slow stretches outlasted a run, and what that means for pairing.</summary>
    public static string SpellsSentence(Spells? spells)
    {
        if (spells is null)
            return "";
        var text = string.Create(Invariant, $"\nIn the order they ran ({spells.Runs} measured runs, {spells.RunSeconds:F2} s a run, {spells.RoundSeconds:F0} s a round at the median), each run's deviation from its transport's mean went with the next run's by r = {spells.NextRunCorrelation:F2}");
        text += spells.NextRunCorrelation > SpellCorrelation
            ? string.Create(Invariant, $" (above {SpellCorrelation:F1}): the machine's speed moved in spells longer than a run, which runs next to each other shared: pairing each run with the reference run nearest to it cancels part of it, and more the nearer that run is (-p:ReferenceEvery=N runs the reference every N runs).")
            : string.Create(Invariant, $" (not above {SpellCorrelation:F1}): neighbouring runs did not share their luck, and no slow spell of the machine showed that outlasted a run.");
        if (spells.CpuCorrelation is { } cpu)
            text += cpu > CpuBoundCorrelation
                ? string.Create(Invariant, $" A run's deviation in time went with its deviation in client CPU by r = {cpu:F2}: slow runs also spent more CPU on the same work, as when the machine itself runs slower (another tenant of the host, its caches and memory) rather than the runs only waiting.")
                : string.Create(Invariant, $" A run's deviation in time went with its deviation in client CPU by r = {cpu:F2} only: slow runs mostly waited rather than computed more slowly.");
        if (spells.Steal is { } steal)
            text += string.Create(Invariant, $" The hypervisor's steal (CPU time it gave to something else while this machine's CPUs had work, charged to no process) came to {steal.PerSecond * 1000:F0} ms a second of run over the CPUs together, {steal.MostPerSecond * 1000:F0} in the run that met the most")
                    + (steal.Correlation is { } r
                        ? string.Create(Invariant, $"; a run's deviation in time went with it by r = {r:F2}") + (r > SpellCorrelation
                            ? ": part of the slow runs' time was the CPU taken away."
                            : ": the slow runs were not the CPU taken away.")
                        : ".");
        return text + "\n";
    }

    /// <summary>A run that compiled for longer than this share of its time measured code still warming up, not the transport's.</summary>
    public const double WarmingUpShare = 0.05;

    /// <summary>How much of the measured runs the client's JIT spent compiling (tiered compilation goes on for several runs).</summary>
    public static string JitSentence(IReadOnlyList<TransportSummary> rows)
    {
        var measured = rows.Where(r => r.Costs is { ClientJitMsPerRun: not null, ClientJitMaxShare: not null }).ToList();
        if (measured.Count == 0)
            return "";
        var most = measured.MaxBy(r => r.Costs!.ClientJitMaxShare!.Value)!;
        var share = most.Costs!.ClientJitMaxShare!.Value;
        var text = string.Create(Invariant,
            $"\nThe client's JIT compiled for {measured.Average(r => r.Costs!.ClientJitMsPerRun!.Value):F0} ms a run on average during the measured runs, at most {share * 100:F1} % of a run's time ({most.Transport}, {most.Records:N0} records).");
        return text + (share > WarmingUpShare
            ? string.Create(Invariant, $" More than {WarmingUpShare * 100:F0} %: that run's time is partly the JIT's, recompiling code on the other core; where the first rounds' runs compile most, more warm-up runs (-p:WarmupRuns=…) leave it out.\n")
            : " Code was compiled before the measured runs, not during them.\n");
    }

    public static string Html(IReadOnlyList<NoiseReading> readings) => readings.Count == 0 ? ""
        : "<h2>The machine's noise</h2>" + ReportTable.Html(Columns, readings, " id=\"noise\"", r => r.SpreadPercent > MachineNoise.NoisyPercentOf(r) ? " class=\"bad\"" : "");
}
