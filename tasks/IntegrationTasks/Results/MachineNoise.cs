using System.Diagnostics;
using System.Globalization;
using System.Text.Json;
using IntegrationTasks.Common;
using IntegrationTasks.Data;
using IntegrationTasks.Transfer;
using Microsoft.Build.Framework;

namespace IntegrationTasks.Results;

/// <summary>
/// One reading of the machine's own noise: a fixed piece of work timed again and again for about a second. The spread of its times
/// (coefficient of variation) is what this machine does to a run that does the same thing each time, with no transport in it.
/// </summary>
public sealed record NoiseReading(string Phase, string Loop, int Chunks, double MeanMs, double StdDevMs, double MinMs, double MaxMs, DateTimeOffset Timestamp)
{
    /// <summary>The database the database loop ran on (its provider); null for the CPU loop.</summary>
    public string? Provider { get; init; }

    /// <summary>Standard deviation over mean, in percent.</summary>
    public double SpreadPercent => MeanMs > 0 ? StdDevMs / MeanMs * 100 : 0;

    public static NoiseReading Of(string phase, string loop, IReadOnlyCollection<double> chunkMs)
    {
        var summary = Summary.Of(chunkMs);
        return new NoiseReading(phase, loop, summary.Count, summary.Mean, summary.StdDev, summary.Min, summary.Max, DateTimeOffset.UtcNow);
    }
}

/// <summary>
/// The calibration RunAll runs before its first transport and after its last (as BenchmarkDotNet looks at its environment): a
/// CPU-bound loop (a fixed arithmetic loop, one core), a memory-bound loop (dependent reads past every cache), a database-bound
/// loop (a fixed set of lookups by ID on the server's database, as PerRecord servers do) and a write loop (batches inserted into
/// the client's database, as every run commits them), each timed in chunks for about a second. The report sets their spread
/// beside the transports' and warns when the machine was noisier than <see cref="NoisyPercent"/>, or its speed moved by more than
/// <see cref="DriftPercent"/> between before and after.
/// </summary>
public static class MachineNoise
{
    public const string Cpu = "CPU loop";
    public const string DatabaseLoop = "Database loop";
    public const string WriteLoop = "Write loop";
    public const string Memory = "Memory loop";

    /// <summary>A loop whose chunks vary more than this (coefficient of variation) was run on a noisy machine: the CPU loop's.</summary>
    public const double NoisyPercent = 5;

    /// <summary>
    /// The database loop's: its lookups allocate, and its own garbage collections vary it several times more than the CPU loop on
    /// a quiet machine.
    /// </summary>
    public const double NoisyDatabasePercent = 15;

    /// <summary>
    /// PostgreSQL's database loop: each lookup is a round trip between this process and a backend process, and where the scheduler
    /// puts the two on two cores decides its speed. On a quiet machine its spread within a reading is wide, and its speed moves
    /// far in either direction between readings. So its spread is judged at 25 %, and its drift not at all.
    /// </summary>
    public const double NoisyRoundTripPercent = 25;

    public static double NoisyPercentOf(NoiseReading reading) => reading.Loop switch
    {
        DatabaseLoop => IsRoundTripLoop(reading) ? NoisyRoundTripPercent : NoisyDatabasePercent,
        WriteLoop => reading.Provider == nameof(DatabaseProvider.PostgreSql) ? NoisyWritePostgresPercent : NoisyWritePercent,
        Memory => NoisyMemoryPercent,
        _ => NoisyPercent,
    };

    /// <summary>How much a loop may move between before and after on a quiet machine; null where its move says nothing (PostgreSQL's lookups).</summary>
    public static double? DriftPercentOf(NoiseReading reading) =>
        IsRoundTripLoop(reading) ? null : reading.Loop == WriteLoop ? WriteDriftPercent : DriftPercent;

    public static bool IsRoundTripLoop(NoiseReading reading) => reading.Loop == DatabaseLoop && reading.Provider == nameof(DatabaseProvider.PostgreSql);

    /// <summary>
    /// How long each loop runs untimed first: the first chunks in a process are the JIT's (tiered compilation), not the machine's.
    /// With half a second for the database and write loops and none for the others, the readings before a RunAll spread more than
    /// those taken right after them in the same process; with a second, alike.
    /// </summary>
    public static readonly TimeSpan WarmUp = TimeSpan.FromSeconds(1);

    /// <summary>
    /// The write loop's: SQLite's WAL checkpoints (a file write and an fsync) fall into some chunks and not others, so on a quiet
    /// machine it spreads far more than the other loops and its mean moves either way between before and after a RunAll. So its
    /// spread is judged at 40 % and its drift at <see cref="WriteDriftPercent"/>.
    /// </summary>
    public const double NoisyWritePercent = 40;

    /// <summary>
    /// The write loop's on PostgreSQL: each commit waits for the server's WAL to reach the disk, which spreads it wider still on a
    /// quiet machine and moves it either way between before and after.
    /// </summary>
    public const double NoisyWritePostgresPercent = 60;

    /// <summary>How far the write loop moves between before and after on a quiet machine, and more (see <see cref="NoisyWritePercent"/>).</summary>
    public const double WriteDriftPercent = 30;

    /// <summary>
    /// The memory loop's: on a quiet machine it spreads a little more than the CPU loop, within a reading and between before and
    /// after.
    /// </summary>
    public const double NoisyMemoryPercent = 10;

    /// <summary>A loop that ran this much slower or faster after the RunAll than before it: the machine changed during the run.</summary>
    public const double DriftPercent = 10;

    private const int MinimumChunks = 10;

    /// <summary>
    /// The memory loop: chunks of 200,000 reads at random places in 64 MB, each waiting for the one before (one cycle through a
    /// shuffled array, from a fixed seed), so most miss every cache, until <paramref name="duration"/> has passed. The CPU loop runs in
    /// registers and never sees another process, or another virtual machine on the host, taking the shared cache and the memory
    /// bus; the runs, which allocate and copy, do.
    /// </summary>
    public static NoiseReading MemoryLoop(string phase, TimeSpan duration)
    {
        const int Slots = 16 * 1024 * 1024; // ints: 64 MB, more than any cache here
        var next = new int[Slots];
        for (var i = 0; i < Slots; i++)
            next[i] = i;
        var random = new Random(2014);
        for (var i = Slots - 1; i > 0; i--) // Sattolo's shuffle: a single cycle through every slot
        {
            var j = random.Next(i);
            (next[i], next[j]) = (next[j], next[i]);
        }
        var at = 0;
        var warm = Stopwatch.StartNew();
        while (warm.Elapsed < WarmUp)
            at = Chunk(next, at);
        var chunks = new List<double>();
        var total = Stopwatch.StartNew();
        while (total.Elapsed < duration || chunks.Count < MinimumChunks)
        {
            var watch = Stopwatch.StartNew();
            at = Chunk(next, at);
            chunks.Add(watch.Elapsed.TotalMilliseconds);
        }
        GC.KeepAlive(at);
        return NoiseReading.Of(phase, Memory, chunks);

        static int Chunk(int[] next, int at)
        {
            for (var i = 0; i < 200_000; i++)
                at = next[at];
            return at;
        }
    }

    /// <summary>The CPU loop: chunks of a fixed integer loop (xorshift), which the JIT cannot fold away, until <paramref name="duration"/> has passed.</summary>
    public static NoiseReading CpuLoop(string phase, TimeSpan duration)
    {
        ulong state = 88172645463325252;
        var warm = Stopwatch.StartNew();
        while (warm.Elapsed < WarmUp)
            Chunk(ref state);
        var chunks = new List<double>();
        var total = Stopwatch.StartNew();
        while (total.Elapsed < duration || chunks.Count < MinimumChunks)
        {
            var watch = Stopwatch.StartNew();
            Chunk(ref state);
            chunks.Add(watch.Elapsed.TotalMilliseconds);
        }
        GC.KeepAlive(state);
        return NoiseReading.Of(phase, Cpu, chunks);

        static void Chunk(ref ulong x)
        {
            for (var i = 0; i < 4_000_000; i++)
            {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
            }
        }
    }

    /// <summary>
    /// The database loop: chunks of 2,000 lookups by ID (IDs 1 to 200, ten times over) on the server's database, until
    /// <paramref name="duration"/> has passed. A chunk of only 200 varied too much on a quiet machine (a garbage collection or a
    /// scheduling slice is a large part of it).
    /// </summary>
    public static async Task<NoiseReading> DatabaseLoopAsync(string phase, Database database, TimeSpan duration, CancellationToken cancellationToken)
    {
        await using var lookup = await RecordLookup.OpenAsync(database, ServerWork.PerRecord, cancellationToken).ConfigureAwait(false);
        // The IDs there are (a small RunAll may have fewer than 200); looking them up warms the connection and the statement.
        var ids = new List<int>();
        for (var id = 1; id <= 200 && await lookup.FindAsync(id, cancellationToken).ConfigureAwait(false) is not null; id++)
            ids.Add(id);
        if (ids.Count == 0)
            throw new IntegrationException(ErrorCodes.InvalidParameter, "The calibration's database loop looks up IDs from 1 in ServiceTable, which has no ID 1.");
        var warm = Stopwatch.StartNew();
        while (warm.Elapsed < WarmUp)
            await ChunkAsync().ConfigureAwait(false);
        var chunks = new List<double>();
        var total = Stopwatch.StartNew();
        while (total.Elapsed < duration || chunks.Count < MinimumChunks)
        {
            var watch = Stopwatch.StartNew();
            await ChunkAsync().ConfigureAwait(false);
            chunks.Add(watch.Elapsed.TotalMilliseconds);
        }
        return NoiseReading.Of(phase, DatabaseLoop, chunks) with { Provider = database.Provider.ToString() };

        async Task ChunkAsync()
        {
            for (var i = 0; i < 2000; i++)
                await lookup.FindAsync(ids[i % ids.Count], cancellationToken).ConfigureAwait(false);
        }
    }

    /// <summary>The write loop's table: shaped as ClientTable, on the client's database, dropped after each reading.</summary>
    public static readonly RecordTable ScratchTable = new("CalibrationTable", "CalibrationTableID", "DescCalibrationTable");

    /// <summary>
    /// The write loop: chunks of ten batches of 1,000 sample records, each batch inserted in one transaction, into a table shaped as
    /// ClientTable on the client's database: the client's work in every run (the same writer, the table growing, SQLite's WAL
    /// checkpoints falling where they fall), until <paramref name="duration"/> has passed. A chunk of one batch varied widely on a
    /// quiet machine (one with a checkpoint is several times slower); ten hold about one checkpoint each. A scratch table,
    /// dropped after, so ClientTable keeps the last run's rows. The database loop only reads: a disk or a commit that got slower
    /// shows here.
    /// </summary>
    public static async Task<NoiseReading> WriteLoopAsync(string phase, Database database, TimeSpan duration, CancellationToken cancellationToken)
    {
        const int BatchRecords = 1000, ChunkBatches = 10;
        var sample = Enumerable.Range(1, BatchRecords).Select(id => SampleData.Create(id)).ToList();
        var nextId = 1;
        await database.EmptyAsync(ScratchTable, cancellationToken).ConfigureAwait(false); // created if missing
        try
        {
            await using var writer = await RecordWriter.OpenAsync(database, ScratchTable, cancellationToken).ConfigureAwait(false);
            var warm = Stopwatch.StartNew();
            while (warm.Elapsed < WarmUp)
                await writer.InsertBatchAsync(NextBatch(), cancellationToken).ConfigureAwait(false);
            var chunks = new List<double>();
            var total = Stopwatch.StartNew();
            while (total.Elapsed < duration || chunks.Count < MinimumChunks)
            {
                // Made before the clock starts: the loop times the database, not the records' making.
                var chunk = Enumerable.Range(0, ChunkBatches).Select(_ => NextBatch()).ToList();
                var watch = Stopwatch.StartNew();
                foreach (var batch in chunk)
                    await writer.InsertBatchAsync(batch, cancellationToken).ConfigureAwait(false);
                chunks.Add(watch.Elapsed.TotalMilliseconds);
            }
            return NoiseReading.Of(phase, WriteLoop, chunks) with { Provider = database.Provider.ToString() };
        }
        finally
        {
            await database.DropAsync(ScratchTable, CancellationToken.None).ConfigureAwait(false);
        }

        List<ServiceRecord> NextBatch()
        {
            var first = nextId;
            nextId += BatchRecords;
            return [.. sample.Select((record, i) => record with { Id = first + i })];
        }
    }

    public static void Append(string path, NoiseReading reading)
    {
        Directory.CreateDirectory(Path.GetDirectoryName(Path.GetFullPath(path))!);
        File.AppendAllText(path, JsonSerializer.Serialize(reading, JsonFiles.Options) + "\n");
    }

    public static List<NoiseReading> Read(string? path) =>
        string.IsNullOrEmpty(path) || !File.Exists(path) ? []
            : [.. File.ReadLines(path).Where(l => l.Length > 0).Select(l => JsonSerializer.Deserialize<NoiseReading>(l, JsonFiles.Options)!)];

    /// <summary>
    /// RunAll's one IT5006 line: every reason in it, as the report has them (a warning per reason put several lines at the end of
    /// a RunAll, and the terminal's summary repeats them); null when the machine was quiet enough.
    /// </summary>
    public static string? BuildWarning(IReadOnlyList<NoiseReading> readings) => Warnings(readings) is { Count: > 0 } warnings
        ? $"The machine was noisy during this RunAll: {NoiseWarning.Describe(warnings)}; compare the transports' intervals with it."
        : null;

    /// <summary>What made the machine noisy during the run; empty when it was quiet enough.</summary>
    public static List<NoiseWarning> Warnings(IReadOnlyList<NoiseReading> readings)
    {
        var warnings = new List<NoiseWarning>();
        foreach (var reading in readings.Where(r => r.SpreadPercent > NoisyPercentOf(r)))
            warnings.Add(new NoiseWarning(reading.Loop, reading.Phase, reading.SpreadPercent, NoisyPercentOf(reading)));
        foreach (var loop in readings.GroupBy(r => r.Loop))
        {
            if (loop.FirstOrDefault(r => r.Phase == "Before") is not { } before || loop.LastOrDefault(r => r.Phase == "After") is not { } after
                || DriftPercentOf(before) is not { } limit)
                continue;
            var change = (after.MeanMs / before.MeanMs - 1) * 100;
            if (Math.Abs(change) > limit)
                warnings.Add(new NoiseWarning(loop.Key, Phase: null, change, limit));
        }
        return warnings;
    }
}

/// <summary>
/// One reason the machine was noisy: a loop's spread within one reading (<paramref name="Phase"/> Before or After) above its
/// threshold, or, with no phase, its mean moving between before and after by more than its limit (a positive percent: slower after).
/// </summary>
public sealed record NoiseWarning(string Loop, string? Phase, double Percent, double LimitPercent)
{
    public bool IsDrift => Phase is null;

    public string Describe() => IsDrift
        ? string.Create(CultureInfo.InvariantCulture,
            $"the {Loop.ToLowerInvariant()} ran {Math.Abs(Percent):F0} % {(Percent > 0 ? "slower" : "faster")} after the run than before it (more than {LimitPercent:F0} %)")
        : string.Create(CultureInfo.InvariantCulture,
            $"the {Loop.ToLowerInvariant()} {(Phase == "Before" ? "before the run" : "after the run")} varied by {Percent:F1} % (more than {LimitPercent:F0} %)");

    public static string Describe(IEnumerable<NoiseWarning> warnings) => string.Join("; ", warnings.Select(w => w.Describe()));
}

/// <summary>RunAll's calibration before its first transport (Phase=Before) and after its last (Phase=After): see <see cref="MachineNoise"/>.</summary>
public sealed class CalibrateNoise : IntegrationTask
{
    [Required] public string Phase { get; set; } = "";
    [Required] public string ServerProvider { get; set; } = "";
    [Required] public string ServerConnString { get; set; } = "";

    /// <summary>The client's database, where the write loop inserts (into a scratch table, dropped after).</summary>
    [Required] public string ClientProvider { get; set; } = "";
    [Required] public string ClientConnString { get; set; } = "";

    /// <summary>Where the readings are appended (calibration.jsonl in the results' state folder).</summary>
    [Required] public string ReadingsFile { get; set; } = "";

    /// <summary>How long each loop runs.</summary>
    public double Seconds { get; set; } = 1;

    protected override async Task ExecuteAsync(CancellationToken cancellationToken)
    {
        if (Phase is not ("Before" or "After"))
            throw new IntegrationException(ErrorCodes.InvalidParameter, $"Phase must be Before or After (was '{Phase}').");
        if (!(Seconds is > 0 and <= 60))
            throw new IntegrationException(ErrorCodes.InvalidParameter, $"CalibrationSeconds must be above 0 and at most 60 (was {Seconds}).");
        if (Phase == "Before" && File.Exists(ReadingsFile))
            File.Delete(ReadingsFile);
        var duration = TimeSpan.FromSeconds(Seconds);
        var cpu = MachineNoise.CpuLoop(Phase, duration);
        var memory = MachineNoise.MemoryLoop(Phase, duration);
        var database = await MachineNoise.DatabaseLoopAsync(Phase, Database.Create(ServerProvider, ServerConnString), duration, cancellationToken).ConfigureAwait(false);
        var write = await MachineNoise.WriteLoopAsync(Phase, Database.Create(ClientProvider, ClientConnString), duration, cancellationToken).ConfigureAwait(false);
        foreach (var reading in new[] { cpu, memory, database, write })
            MachineNoise.Append(ReadingsFile, reading);
        Log.LogMessage(MessageImportance.High,
            "Machine noise {0} the runs: {1}.", Phase == "Before" ? "before" : "after",
            string.Join(", ", new[] { cpu, memory, database, write }.Select(r => string.Create(CultureInfo.InvariantCulture,
                $"{r.Loop.ToLowerInvariant().Replace("cpu", "CPU", StringComparison.Ordinal)} {r.MeanMs:F2} ms a chunk ±{r.SpreadPercent:F1} % ({r.Chunks} chunks)"))));
        if (Phase == "After" && MachineNoise.BuildWarning(MachineNoise.Read(ReadingsFile)) is { } warning)
            Log.LogWarning(null, ErrorCodes.MachineNoisy, null, null, 0, 0, 0, 0, "{0}", warning);
    }
}

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
        if (roundTrips)
            md.Append(string.Create(Invariant, $"\nOn PostgreSQL each lookup of the database loop is a round trip to a backend process, and where the scheduler puts the two decides its speed: measured with nothing else running (eight RunAlls, each on a fresh server), it varied by 10–23 % within a reading and took 67–122 ms a chunk from one reading to the next. Its spread is judged at {MachineNoise.NoisyRoundTripPercent:F0} %, its drift not at all.\n"));
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
