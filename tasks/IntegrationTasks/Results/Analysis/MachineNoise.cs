using System.Diagnostics;
using System.Globalization;
using System.Text.Json;
using IntegrationTasks.Data;

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
        WriteLoop => reading.Provider is nameof(DatabaseProvider.PostgreSql) or nameof(DatabaseProvider.MariaDb) ? NoisyWritePostgresPercent : NoisyWritePercent,
        Memory => NoisyMemoryPercent,
        _ => NoisyPercent,
    };

    /// <summary>How much a loop may move between before and after on a quiet machine; null where its move says nothing (PostgreSQL's lookups).</summary>
    public static double? DriftPercentOf(NoiseReading reading) =>
        IsRoundTripLoop(reading) ? null : reading.Loop == WriteLoop ? WriteDriftPercent : DriftPercent;

    public static bool IsRoundTripLoop(NoiseReading reading) =>
        reading.Loop == DatabaseLoop && reading.Provider is nameof(DatabaseProvider.PostgreSql) or nameof(DatabaseProvider.MariaDb);

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
