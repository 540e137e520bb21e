using System.Globalization;
using IntegrationTasks.Transfer;

namespace IntegrationTasks.Results;

/// <summary>One row of the report: a transport at a record count, over its repetitions.</summary>
public sealed record TransportSummary(
    string Transport,
    int Records,
    Summary Seconds,
    double? WarmupSeconds,
    IReadOnlyList<int> OutlierRepetitions,
    double? PValueVsFaster,
    double MeanRecordsPerSecond,
    double? MeanBytesPerRecord,
    double? RatioToBaseline,
    double PercentSlowerThanFastest,
    double SecondsBehindFastest,
    long MaxClientPeakBytes,
    long? MaxServerPeakBytes)
{
    public RunCosts? Costs { get; init; }

    /// <summary>What its broker used, for a queue transport whose broker the build started (null otherwise).</summary>
    public BrokerCosts? Broker { get; init; }

    /// <summary>The warm-up runs before these (the first one's time is <see cref="WarmupSeconds"/>).</summary>
    public int WarmupRuns { get; init; }

    /// <summary>How the server read its batches in these runs (PerRecord or Range).</summary>
    public string ServerWork { get; init; } = nameof(Data.ServerWork.PerRecord);

    /// <summary>Where these runs' clients ran (<see cref="ClientProcessMode"/>: Build, the first, for results from before clients had processes).</summary>
    public ClientProcessMode ClientMode { get; init; }

    /// <summary>Whether each client ran in a process of its own, so that its peak memory is its own (not the build's).</summary>
    public bool ClientOwnProcess => ClientMode != ClientProcessMode.Build;

    /// <summary>Mean time over PipelinedCopy's (no transport, both cores busy); null without it at this record count.</summary>
    public double? RatioToPipelined { get; init; }

    /// <summary>
    /// The reference the ratios and overhead are against: PipelinedCopy, or PipelinedCopyRange for a transport whose server reads
    /// ranges in a run whose reference reads per ID (the same database work, no transport).
    /// </summary>
    public string Reference { get; init; } = References.Pipelined;

    /// <summary>
    /// Each run's ratio to the PipelinedCopy run nearest to it in time in an interleaved RunAll (<see cref="Summaries.Pairs"/>), over
    /// the runs: mean and 95% interval. Null when the runs were not interleaved.
    /// </summary>
    public Summary? PairedRatioToPipelined { get; init; }

    /// <summary>
    /// What the transport itself costs, in µs a record, with its 95% interval: interleaved, the mean of each run's time less its paired
    /// reference run's (<see cref="OverheadPaired"/>); otherwise (this mean − PipelinedCopy's mean) / records, the interval Welch's.
    /// </summary>
    public double? OverheadMicrosPerRecord { get; init; }
    public double? OverheadCi95Micros { get; init; }
    public bool OverheadPaired { get; init; }

    /// <summary>Mean time over the peer's (the database administrator's own tool); null without one at this record count.</summary>
    public double? RatioToPeer { get; init; }

    /// <summary>Every measured run's batch latencies (request sent → committed), their histograms added; null where none was measured.</summary>
    public Transfer.LatencySummary? BatchLatency { get; init; }

    /// <summary>How the records travel (XML, JSON, Protobuf, SOAP…: its TransportDefinition's Encoding); null for the references and peers.</summary>
    public string? Encoding { get; init; }

    /// <summary>The client reached its server through the delay relay in these runs.</summary>
    public bool ThroughRelay { get; init; }

    /// <summary>A peer (Peer: …): moves the rows with the databases' own tools, reported beside the transports, never ranked among them.</summary>
    public bool IsPeer => Key.IsPeer;

    /// <summary>The table the row belongs in: its record count and its rows' payload.</summary>
    [System.Text.Json.Serialization.JsonIgnore]
    public RunSize Size => new(Records, Key.PayloadBytes, Key.PayloadKind);

    /// <summary>Payload moved per second, in MB (10^6 bytes), over the mean time; null without a payload.</summary>
    public double? PayloadMegabytesPerSecond => Key.PayloadBytes > 0 ? MeanRecordsPerSecond * Key.PayloadBytes / 1e6 : null;

    /// <summary>What the row is, as fields (<see cref="Transport"/> is its label).</summary>
    public RowKey Key
    {
        get => _key ?? new RowKey(Transport, RowKey.KindOf(Transport));
        init => _key = value;
    }

    private readonly RowKey? _key;

    /// <summary>
    /// The row's runs' key, every field (a row's runs share it: the rows split wherever a run's key differs in what a RunAll varies).
    /// Null in a summary made before it was recorded.
    /// </summary>
    public RunKey? RunKey { get; init; }

    /// <summary>
    /// PipelinedCopyRange where PipelinedCopy reads by ID: other database work than the rows around it, so listed by its mean but kept
    /// out of the ranking (never "fastest", not what the next row is compared with); the default RunAll called it fastest.
    /// </summary>
    public bool Unranked { get; init; }
}

/// <summary>What a report's table holds: runs of one record count whose rows carried one payload (0 bytes: the series' rows).</summary>
public readonly record struct RunSize(int Records, int PayloadBytes, string? PayloadKind = null) : IComparable<RunSize>
{
    private bool Text => PayloadKind == nameof(Data.PayloadKind.Text);

    /// <summary>"20,000 records", "1,000 records of 1 MiB payload", "1,000 records of 2 KiB text payload".</summary>
    public string Heading => PayloadBytes == 0 ? string.Create(CultureInfo.InvariantCulture, $"{Records:N0} records")
        : string.Create(CultureInfo.InvariantCulture, $"{Records:N0} records of {RunKey.PayloadSize(PayloadBytes)} {(Text ? "text " : "")}payload");

    /// <summary>For element ids: "20000", "1000-p1048576" (bytes), "1000-t2048" (text).</summary>
    public string Id => PayloadBytes == 0 ? Records.ToString(CultureInfo.InvariantCulture)
        : string.Create(CultureInfo.InvariantCulture, $"{Records}-{(Text ? 't' : 'p')}{PayloadBytes}");

    /// <summary>By payload, then by record count: the series' rows first, as before there were payloads.</summary>
    public int CompareTo(RunSize other) =>
        (PayloadBytes, Text, Records).CompareTo((other.PayloadBytes, other.Text, other.Records));
}

/// <summary>What a transport's runs cost besides time, averaged over its measured repetitions.</summary>
public sealed record RunCosts(
    double SetupSeconds,
    double FirstCommitSeconds,
    double ClientCpuMsPer1000,
    double? ServerCpuMsPer1000,
    double ClientAllocatedBytesPerRecord,
    int ThreadPoolMaxThreads,
    long ThreadPoolMaxQueue,
    double ThreadPoolItemsPer1000,
    double? ServerAllocatedBytesPerRecord,
    double? ServerItemsPer1000,
    int? ServerMaxThreads,
    long? ServerMaxQueue)
{
    /// <summary>The time the client's JIT spent compiling in a run, mean over the runs (null where not measured): code still warming up.</summary>
    public double? ClientJitMsPerRun { get; init; }

    /// <summary>The most any run spent compiling, as a share of its time.</summary>
    public double? ClientJitMaxShare { get; init; }

    /// <summary>The time the client's GC paused its threads in a run, mean over the runs (null where not measured).</summary>
    public double? ClientGcPauseMsPerRun { get; init; }

    public static RunCosts Of(IReadOnlyList<Measurement> runs)
    {
        var serverCpu = runs.Where(r => r.ServerCpuSeconds is not null).ToList();
        var jit = runs.Where(r => r.ClientJitSeconds is not null).ToList();
        var gcPauses = runs.Where(r => r.ClientGcPauseSeconds is not null).Select(r => r.ClientGcPauseSeconds!.Value * 1000);
        return new RunCosts(
            runs.Average(r => r.SetupSeconds),
            runs.Average(r => r.FirstCommitSeconds),
            runs.Average(r => r.ClientCpuSeconds * 1e6 / Math.Max(r.Records, 1)),
            serverCpu.Count > 0 ? serverCpu.Average(r => r.ServerCpuSeconds!.Value * 1e6 / Math.Max(r.Records, 1)) : null,
            runs.Average(r => (double)r.ClientAllocatedBytes / Math.Max(r.Records, 1)),
            runs.Max(r => r.ThreadPoolMaxThreads),
            runs.Max(r => r.ThreadPoolMaxQueue),
            runs.Average(r => r.ThreadPoolCompletedItems * 1000.0 / Math.Max(r.Records, 1)),
            Mean(runs.Where(r => r.ServerAllocatedBytes is not null).Select(r => (double)r.ServerAllocatedBytes!.Value / Math.Max(r.Records, 1))),
            Mean(runs.Where(r => r.ServerThreadPoolCompletedItems is not null).Select(r => r.ServerThreadPoolCompletedItems!.Value * 1000.0 / Math.Max(r.Records, 1))),
            runs.Max(r => r.ServerThreadPoolMaxThreads),
            runs.Max(r => r.ServerThreadPoolMaxQueue))
        {
            ClientJitMsPerRun = jit.Count > 0 ? jit.Average(r => r.ClientJitSeconds!.Value * 1000) : null,
            ClientJitMaxShare = jit.Count > 0 ? jit.Max(r => r.ClientJitSeconds!.Value / Math.Max(r.ElapsedSeconds, 1e-9)) : null,
            ClientGcPauseMsPerRun = Mean(gcPauses),
        };
    }

    private static double? Mean(IEnumerable<double> values)
    {
        var list = values.ToList();
        return list.Count > 0 ? list.Average() : null;
    }
}

/// <summary>What the broker a queue transport went through used in its measured runs (each run's reading over its timed transfer).</summary>
public sealed record BrokerCosts(double CpuMsPer1000, double Cores, long? PeakBytes, double? StorageWriteBytesPerRecord)
{
    /// <summary>Null where no run metered a broker (no broker, or one the build did not start).</summary>
    public static BrokerCosts? Of(IReadOnlyList<Measurement> runs)
    {
        var metered = runs.Where(r => r.BrokerCpuSeconds is not null).ToList();
        if (metered.Count == 0)
            return null;
        var written = metered.Where(r => r.BrokerStorageWriteBytes is not null).ToList();
        return new BrokerCosts(
            metered.Average(r => r.BrokerCpuSeconds!.Value * 1e6 / Math.Max(r.Records, 1)),
            metered.Average(r => r.BrokerCpuSeconds!.Value / Math.Max(r.ElapsedSeconds, 1e-9)),
            metered.Max(r => r.BrokerPeakBytes),
            written.Count > 0 ? written.Average(r => (double)r.BrokerStorageWriteBytes!.Value / Math.Max(r.Records, 1)) : null);
    }
}

/// <summary>
/// The runs summarised: a row per what the runs are (<see cref="RowKey"/>) at each size, ranked, each against the fastest, the
/// baseline, its limit (the reference that does the same database work), the peer and the one above it.
/// </summary>
public static class Summaries
{
    private const string Baseline = References.Baseline;
    private const string Pipelined = References.Pipelined;
    private const string PipelinedRange = References.PipelinedRange;

    public static List<TransportSummary> Of(IEnumerable<Measurement> measurements)
    {
        var rows = new List<TransportSummary>();
        foreach (var size in RowKey.Of(measurements).GroupBy(k => new RunSize(k.Run.Records, k.Key.PayloadBytes, k.Key.PayloadKind)).OrderBy(g => g.Key))
        {
            var records = size.Key.Records;
            var groups = size.GroupBy(k => k.Key, k => k.Run)
                .Select(g => (Key: g.Key, Runs: g.Where(m => !m.Warmup).ToList(), Warmups: g.Where(m => m.Warmup).ToList()))
                .Where(g => g.Runs.Count > 0)
                .Select(g => (g.Key, g.Runs, g.Warmups, Seconds: Summary.Of(g.Runs.Select(m => m.ElapsedSeconds).ToList())))
                .OrderBy(g => g.Key.IsPeer ? 1 : 0).ThenBy(g => g.Seconds.Mean).ToList();
            if (groups.Count == 0)
                continue;
            // Peers are listed after the transports and kept out of their ranking; so is PipelinedCopyRange beside a PipelinedCopy that
            // reads by ID (other database work).
            var pipelinedReads = groups.FirstOrDefault(g => g.Key?.Transport == Pipelined).Runs?[0].ServerReads;
            bool OtherWork(RowKey key, IReadOnlyList<Measurement> runs) =>
                key.Transport == PipelinedRange && pipelinedReads is not null && runs[0].ServerReads != pipelinedReads;
            var fastest = groups.FirstOrDefault(g => !g.Key.IsPeer && !OtherWork(g.Key, g.Runs)).Seconds?.Mean ?? groups[0].Seconds.Mean;
            // A Load run's record count is its clients' (N × RecordsPerClient): a reference found here ran at the same concurrency.
            // With a Tls=false+true plan each pass has its own references: a row is measured against its pass's.
            double? BaselineOf(RowKey row) => groups.Where(g => g.Key.Transport == Baseline).OrderBy(g => g.Key.Tls == row.Tls ? 0 : 1).FirstOrDefault().Seconds?.Mean;
            // PipelinedCopy first: where both limits read alike (a Range run), it is the one.
            var allLimits = groups.Where(g => g.Key.IsLimit).OrderBy(g => g.Key.Transport == Pipelined ? 0 : 1).ToList();
            var peer = groups.Where(g => g.Key.IsPeer).Select(g => g.Seconds).MinBy(s => s.Mean);
            Summary? faster = null;
            foreach (var (key, runs, warmups, seconds) in groups)
            {
                if (key.IsPeer)
                    faster = null;
                var unranked = OtherWork(key, runs);
                // A transport's limit reads as its server did (range reads or per ID); a limit's own ratio is to PipelinedCopy's.
                var sameTls = allLimits.Where(g => g.Key.Tls == key.Tls).ToList();
                var limits = sameTls.Count > 0 ? sameTls : allLimits;
                var limit = limits.FirstOrDefault(g => !key.IsLimit && g.Runs[0].ServerReads == runs[0].ServerReads);
                if (limit.Key is null)
                    limit = limits.FirstOrDefault();
                var baseline = BaselineOf(key);
                var pipelined = limit.Seconds;
                var measuredAgainstLimit = !key.IsLimit && !key.IsPeer;
                var pairs = measuredAgainstLimit ? Pairs(runs, limit.Runs) : null;
                // Interleaved: each run less the reference run nearest in time, so the machine's slow spells cancel out of the interval too.
                var pairedDifference = pairs is null ? null : Summary.Of(pairs.Select(p => p.Run.ElapsedSeconds - p.Reference.ElapsedSeconds).ToList());
                var overhead = pipelined is null || !measuredAgainstLimit ? (double?)null
                    : (pairedDifference?.Mean ?? seconds.Mean - pipelined.Mean) / records * 1e6;
                var serverPeaks = runs.Where(r => r.ServerPeakBytes is not null).Select(r => r.ServerPeakBytes!.Value).ToList();
                var outliers = runs.Where(r => seconds.Outliers.Contains(r.ElapsedSeconds)).Select(r => r.Repetition).Order().ToList();
                rows.Add(new TransportSummary(
                    key.Label, records, seconds, warmups.FirstOrDefault()?.ElapsedSeconds, outliers,
                    faster is null || unranked ? null : Welch.PValue(faster, seconds),
                    records / seconds.Mean, // records over the mean time: the same figure in every table and the console
                    runs.Any(r => r.BytesNotMeasured == true) ? null : runs.Average(r => (double)(r.BytesSent + r.BytesReceived) / Math.Max(r.Records, 1)),
                    baseline is > 0 ? seconds.Mean / baseline.Value : null,
                    (seconds.Mean / fastest - 1) * 100,
                    seconds.Mean - fastest,
                    runs.Max(r => r.ClientPeakBytes),
                    serverPeaks.Count > 0 ? serverPeaks.Max() : null)
                {
                    Key = key,
                    RunKey = runs[0].Key,
                    Costs = RunCosts.Of(runs),
                    Broker = BrokerCosts.Of(runs),
                    WarmupRuns = warmups.Count,
                    ServerWork = runs[0].ServerReads,
                    ClientMode = ClientModeOf(runs),
                    ThroughRelay = runs.Any(r => r.ThroughRelay == true),
                    RatioToPipelined = pipelined is { Mean: > 0 } ? seconds.Mean / pipelined.Mean : null,
                    Reference = limit.Key?.Transport ?? Pipelined,
                    PairedRatioToPipelined = pairs is null ? null : Summary.Of(pairs.Select(p => p.Run.ElapsedSeconds / p.Reference.ElapsedSeconds).ToList()),
                    OverheadMicrosPerRecord = overhead,
                    OverheadCi95Micros = overhead is null ? null : (pairedDifference?.Ci95 ?? Welch.DifferenceCi95(seconds, pipelined!)) / records * 1e6,
                    OverheadPaired = overhead is not null && pairedDifference is not null,
                    RatioToPeer = peer is { Mean: > 0 } ? seconds.Mean / peer.Mean : null,
                    BatchLatency = Transfer.LatencySummary.Merge(runs.Select(r => r.BatchLatency)),
                    Unranked = unranked,
                });
                if (!unranked)
                    faster = seconds;
            }
        }
        return rows;
    }

    /// <summary>The runs' client process mode, where they share one (runs recorded before it was, and a mixture, count as the build's).</summary>
    private static ClientProcessMode ClientModeOf(IReadOnlyList<Measurement> runs) =>
        runs.Select(r => Enum.TryParse<ClientProcessMode>(r.ClientProcess, out var mode) ? mode : ClientProcessMode.Build).Distinct().ToList() is [var one]
            ? one : ClientProcessMode.Build;

    /// <summary>
    /// Each run paired with the reference's run nearest to it in time (same clients), when both ran interleaved in one RunAll. The
    /// machine's slow stretches outlast a run but not a round (consecutive runs' deviations correlate, runs further apart hardly
    /// at all), so the nearest reference run shares more of a run's luck than the one of its round; with
    /// ReferenceEvery the reference also runs between the round's other runs. A tie goes to the reference run of the same round.
    /// </summary>
    internal static List<(Measurement Run, Measurement Reference)>? Pairs(IReadOnlyList<Measurement> runs, IReadOnlyList<Measurement>? reference)
    {
        if (reference is null || runs.Count == 0 || runs[0].RoundSeed is not { } seed
            || runs.Concat(reference).Any(r => r.RoundSeed != seed))
            return null;
        var candidates = reference.Where(r => r.Clients == runs[0].Clients && r.ElapsedSeconds > 0).ToList();
        if (candidates.Count == 0)
            return null;
        return [.. runs.Select(run => (run, candidates
            .MinBy(r => (Math.Abs((Middle(r) - Middle(run)).TotalSeconds), r.Repetition == run.Repetition ? 0 : 1))!))];

        // A run's Timestamp is taken after its verification; its middle is near enough for telling which reference run is closest.
        static DateTimeOffset Middle(Measurement run) => run.Timestamp - TimeSpan.FromSeconds(run.ElapsedSeconds / 2);
    }
}
