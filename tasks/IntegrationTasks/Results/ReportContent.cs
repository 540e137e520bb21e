using System.Globalization;
using System.Text;
using IntegrationTasks.Common;
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

    /// <summary>Mean time over PipelinedCopy's (no transport, both cores busy); null without it at this record count.</summary>
    public double? RatioToPipelined { get; init; }

    /// <summary>
    /// The reference the ratios and overhead are against: PipelinedCopy, or PipelinedCopyRange for a transport whose server reads
    /// ranges in a run whose reference reads per ID (the same database work, no transport).
    /// </summary>
    public string Reference { get; init; } = ReportContent.Pipelined;

    /// <summary>
    /// Each run's ratio to the PipelinedCopy run nearest to it in time in an interleaved RunAll (<see cref="ReportContent.Pairs"/>), over
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
        : string.Create(CultureInfo.InvariantCulture, $"{Records:N0} records of {RowKey.PayloadSize(PayloadBytes)} {(Text ? "text " : "")}payload");

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

/// <summary>A transport that did not run here, with why, how to fix it, and the series' figure.</summary>
/// <summary>A transport at a record count that was asked for and failed: the coded error it ended with (never left out of a report).</summary>
public sealed record FailedEntry(string Transport, int? Records, string Code, string Message)
{
    /// <summary>The run that failed (its transport and record count with every other setting's default where its log did not say).</summary>
    public RunKey Key { get => _key ?? RunKey.Named(Transport, Records); init => _key = value; }

    private readonly RunKey? _key;

    /// <summary>
    /// One entry per run key and code, the first message of each; a failure before any record count (its server did not start) stands
    /// for them all.
    /// </summary>
    public static List<FailedEntry> From(IEnumerable<RunFailure> failures) =>
        failures.Select(f => (Failure: f, Records: f.Records ?? FirstCount(f.RecordCounts)))
            .GroupBy(f => (f.Failure.Transport, f.Records, f.Failure.Code, Key: f.Failure.Key is { } key ? key with { Records = f.Records } : null))
            .Select(g => new FailedEntry(g.Key.Transport, g.Key.Records, g.Key.Code, g.First().Failure.Message) { Key = g.Key.Key ?? RunKey.Named(g.Key.Transport, g.Key.Records) })
            .ToList();

    private static int? FirstCount(string counts) =>
        counts.Split([';', '+'], StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries) is [var only]
        && int.TryParse(only, CultureInfo.InvariantCulture, out var n) ? n : null;

    public string RecordsText => Records is { } n ? n.ToString("N0", CultureInfo.InvariantCulture) : "every count asked for";
}

/// <summary>One transport's runs at several batch sizes (FindBatchSize), as rows labelled by batch size.</summary>
public sealed record BatchSweep(string Transport, int Records, IReadOnlyList<TransportSummary> Rows);

public sealed record NotRunEntry(string Transport, string Reason, string Fix, string SeriesSeconds, string Replacement)
{
    /// <summary>The run that was asked for and not made: the transport under this build's settings, at no one record count.</summary>
    public RunKey Key { get => _key ?? RunKey.Named(Transport); init => _key = value; }

    private readonly RunKey? _key;
}

/// <summary>One row of the series' own 2014 table (declared by its family's targets file), and the transport that plays it here.</summary>
public sealed record SeriesEntry(string Method, double Seconds, string Transport);

/// <summary>
/// What a report shows besides the runs: the transports not run, the series' own figures, the failures, the machine's noise, each
/// transport's encoding, and whether to add the diagnostics of this machine's noise (NoiseDiagnostics).
/// </summary>
public sealed record ReportOptions
{
    public IReadOnlyList<NotRunEntry> NotRun { get; init; } = [];
    public IReadOnlyList<SeriesEntry> Series { get; init; } = [];
    public IReadOnlyList<FailedEntry> Failed { get; init; } = [];
    public IReadOnlyList<NoiseReading> Noise { get; init; } = [];
    public IReadOnlyDictionary<string, string> Encodings { get; init; } = new Dictionary<string, string>();

    /// <summary>Add how the machine's speed moved across the runs (spells, steal), the JIT's share and, in Compare, the chance of agreement.</summary>
    public bool Diagnostics { get; init; }
}

/// <summary>The summaries of the runs (<see cref="Summarise"/>) and the report's tables and sections, which the exporters render.</summary>
public static class ReportContent
{
    public const string Baseline = "DirectCopy";

    /// <summary>The limit with no transport: the same work, pipelined on both cores. Overheads are measured against it.</summary>
    public const string Pipelined = "PipelinedCopy";

    /// <summary>
    /// PipelinedCopy reading ranges (ServerWork=Range) in a run whose ServerWork is PerRecord: the limit for the transports whose
    /// server reads ranges whatever ServerWork says (FileTransferRequest), so that their ratios compare the same database work.
    /// </summary>
    public const string PipelinedRange = "PipelinedCopyRange";

    private static readonly CultureInfo Invariant = CultureInfo.InvariantCulture;

    /// <summary>Below this p-value two neighbours in the ranking are called different; above, indistinguishable.</summary>
    public const double SignificanceLevel = 0.05;

    /// <summary>The runs with their rows' labels as their transport, for the sections that list runs by row (scaling).</summary>
    public static List<Measurement> Labelled(IEnumerable<Measurement> measurements)
    {
        var keyed = RowKey.Of(measurements);
        // Sections that list runs by row across the tables name the payload where the runs carried several.
        var payloads = keyed.Select(k => k.Key.PayloadBytes).Distinct().Count() > 1;
        return [.. keyed.Select(k => k.Run with { Transport = payloads ? k.Key.LabelWithPayload : k.Key.Label })];
    }

    public static List<TransportSummary> Summarise(IEnumerable<Measurement> measurements)
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
            var baseline = groups.FirstOrDefault(g => g.Key?.Transport == Baseline).Seconds?.Mean;
            // PipelinedCopy first: where both limits read alike (a Range run), it is the one.
            var limits = groups.Where(g => g.Key.IsLimit).OrderBy(g => g.Key.Transport == Pipelined ? 0 : 1).ToList();
            var pipelinedCopy = limits.FirstOrDefault();
            var peer = groups.Where(g => g.Key.IsPeer).Select(g => g.Seconds).MinBy(s => s.Mean);
            Summary? faster = null;
            foreach (var (key, runs, warmups, seconds) in groups)
            {
                if (key.IsPeer)
                    faster = null;
                var unranked = OtherWork(key, runs);
                // A transport's limit reads as its server did (range reads or per ID); a limit's own ratio is to PipelinedCopy's.
                var limit = limits.FirstOrDefault(g => !key.IsLimit && g.Runs[0].ServerReads == runs[0].ServerReads);
                if (limit.Key is null)
                    limit = pipelinedCopy;
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

    /// <summary>What each encoding costs over PipelinedCopy here: its transports' lowest overhead (the encoding's floor, with that transport).</summary>
    internal static string EncodingCosts(IReadOnlyList<TransportSummary> size)
    {
        var floors = size.Where(s => s is { Encoding: not null, OverheadMicrosPerRecord: not null })
            .GroupBy(s => s.Encoding!).Select(g => g.MinBy(s => s.OverheadMicrosPerRecord)!).OrderBy(s => s.OverheadMicrosPerRecord).ToList();
        return floors.Count < 2 ? ""
            : "\nWhat each encoding costs over PipelinedCopy here, by its cheapest transport (µs/record): "
              + string.Join("; ", floors.Select(s => string.Create(Invariant, $"{s.Encoding} {s.OverheadMicrosPerRecord:F2} ({s.Transport})"))) + ".\n";
    }

    /// <summary>Which rows were measured against PipelinedCopyRange (their server reads ranges in a per-ID run), and why.</summary>
    internal static string AgainstRangeLimit(IReadOnlyList<TransportSummary> size) =>
        size.Where(s => s.Reference == PipelinedRange && !s.Key.IsLimit).Select(s => s.Transport).ToList() is { Count: > 0 } rows
            ? $"\n{string.Join(", ", rows)}: {(rows.Count == 1 ? "its server reads" : "their servers read")} each batch with one range query whatever ServerWork says, "
              + $"so {(rows.Count == 1 ? "its" : "their")} × PipelinedCopy, paired ratio and overhead are against {PipelinedRange} (PipelinedCopy reading ranges too: "
              + "the same database work with no transport), not against PipelinedCopy's reads by ID.\n"
            : "";

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

    /// <summary>How a row compares with the one ranked just above it.</summary>
    public static string Verdict(TransportSummary row) => row.IsPeer ? "peer, not ranked"
        : row.Unranked ? "reads ranges, not ranked"
        : !row.Seconds.HasInterval ? row.PValueVsFaster is null ? "fastest mean (too few runs to tell)" : "too few runs to tell"
        : row.PValueVsFaster is { } p ? Significance(p) : "fastest";

    /// <summary>Welch's p-value in words: slower, or indistinguishable on this evidence.</summary>
    public static string Significance(double p) => p switch
    {
        double.NaN => "too few runs to tell",
        < 0.001 => "slower (p<0.001)",
        < SignificanceLevel => string.Create(Invariant, $"slower (p={p:0.###})"),
        _ => string.Create(Invariant, $"indistinguishable (p={p:0.##})"),
    };

    /// <summary>How long a batch waited, per transport: the percentiles of every measured run's batches, their histograms added.</summary>
    public static string BatchLatencyTable(IReadOnlyList<TransportSummary> rows) => BatchLatencySection(rows).Markdown(before: "\n");

    public static ReportDocument BatchLatencySection(IReadOnlyList<TransportSummary> rows)
    {
        var timed = rows.Where(s => s.BatchLatency is not null).ToList();
        return timed.Count == 0 ? new ReportDocument() : new ReportDocument()
            .AddParagraph("How long a batch waited, from its request leaving the client to its transaction committing: every batch of every measured run, "
                          + "their HdrHistograms added (a transport that asks for every batch in one request, as HttpRequest does, counts each batch from that request):")
            .AddTable(ReportColumns.BatchLatency, timed);
    }

    /// <summary>Every repetition, then every failure and every transport not run (status and message say which), so nothing asked for is missing.</summary>
    public static string Csv(IEnumerable<Measurement> measurements, IReadOnlyList<FailedEntry>? failed = null, IReadOnlyList<NotRunEntry>? notRun = null) =>
        ReportTable.Csv(ReportColumns.Csv, measurements,
        [
            .. (failed ?? []).Select(f => KeyCells(f.Key, new()
            {
                ["verified"] = "false", ["failedWith"] = f.Code, ["status"] = "failed", ["message"] = ReportTable.CsvText(f.Message),
            })),
            .. (notRun ?? []).Select(n => KeyCells(n.Key, new()
            {
                ["verified"] = "false", ["status"] = "not run", ["message"] = ReportTable.CsvText(n.Reason),
            })),
        ]);

    private static Dictionary<string, string> KeyCells(RunKey key, Dictionary<string, string> cells)
    {
        foreach (var (id, text) in RunKey.Fields)
            cells[id] = text(key);
        return cells;
    }

    /// <summary>What was asked for and failed, with its code and message.</summary>
    public static ReportDocument FailedSection(IReadOnlyList<FailedEntry> failed) => failed.Count == 0 ? new ReportDocument()
        : new ReportDocument().AddHeading(2, "Failed").AddTable(ReportColumns.Failed, failed);

    public static string Markdown(IReadOnlyList<TransportSummary> summaries, IReadOnlyDictionary<string, string> environment,
        IReadOnlyList<NotRunEntry>? notRun = null, IReadOnlyList<SeriesEntry>? series = null) =>
        new ReportDocument().AddHeading(1, Title).AddBullets(environment.Select(e => $"{e.Key}: {e.Value}"))
            .Append(Tables(summaries, environment)).Append(NotRunSection(notRun ?? [])).Append(SeriesSection(summaries, series ?? [])).Markdown();

    public const string Title = "IntegrationTasks results";

    private static string RunsText(int runs) => runs == 1 ? "one run" : string.Create(Invariant, $"mean of {runs} runs");

    /// <summary>Each record count's tables (the transports ranked, the peers, the costs, the batches' waits) with what explains them.</summary>
    public static ReportDocument Tables(IReadOnlyList<TransportSummary> summaries, IReadOnlyDictionary<string, string> environment)
    {
        var doc = new ReportDocument();
        foreach (var records in summaries.GroupBy(s => s.Size))
        {
            var size = records.Where(s => !s.IsPeer).ToList();
            var peers = records.Where(s => s.IsPeer).ToList();
            var runs = records.First().Seconds.Count;
            var warmup = WarmupText(summaries, records.Key);
            doc.AddHeading(2, string.Create(Invariant, $"{records.Key.Heading}, {ServerWorkHeading(size)}{NetworkHeading(environment)} ({RunsText(runs)}{warmup}, {(runs == 1 ? "verified" : "every run verified")} row by row)"));
            doc.AddTable(ReportColumns.SummaryFor(size), Ranked(size));
            if (peers.Count > 0)
            {
                var fastestTransport = size.FirstOrDefault(s => !s.Key.IsReference);
                doc.AddParagraph("The same rows moved with the databases' own tools, no integration layer (verified like the rest, not ranked among the transports):")
                    .AddTable(PeerColumns, peers.Select(p => new PeerRow(p, fastestTransport,
                        size.FirstOrDefault(r => r.Transport == Pipelined), size.FirstOrDefault(r => r.Transport == Baseline))));
            }
            if (size.Any(s => s.ThroughRelay) && size.Where(s => !s.ThroughRelay && !s.Key.IsReference).Select(s => s.Transport).ToList() is { Count: > 0 } direct)
                doc.AddParagraph($"Not through the delay relay (no latency added, no network fault injected): {string.Join(", ", direct)}.");
            if (size.Any(s => s.OverheadMicrosPerRecord is not null))
                doc.AddParagraph(EncodingCosts(size));
            doc.AddParagraph(AgainstRangeLimit(size));
            if (size.Any(s => s.PairedRatioToPipelined is not null))
                doc.AddParagraph("Paired × PipelinedCopy: the ratio of each run to PipelinedCopy's run nearest to it in time (interleaved, so both met much the same stretch of the machine), mean ±95% interval over the runs; beside it × PipelinedCopy is the ratio of the means.");
            doc.AddParagraph(size.Any(s => s.OverheadPaired)
                ? "Transport overhead: each run's time less its PipelinedCopy run's (the one nearest in time, as paired above) / records, mean ±95% interval over the runs — what the transport adds to the same database work done at full speed in one process; negative or an interval spanning 0 means no measurable cost."
                : "Transport overhead: (mean − PipelinedCopy's mean) / records — what the transport adds to the same database work done at full speed in one process; negative or an interval spanning 0 means no measurable cost.");
            doc.AddParagraph("What the runs cost besides time (client: the process running the client task; server: its process tree):")
                .AddTable(ReportColumns.Costs, records.Where(s => s.Costs is not null));
            if (records.Where(s => s.Broker is not null).ToList() is { Count: > 0 } brokered)
                doc.AddParagraph("What each queue transport's broker used (its own process, started by the build), over the timed transfers; bytes written are what it sent to storage (/proc's write_bytes: its log and data files, fsync'd or written back later):")
                    .AddTable(ReportColumns.Broker, brokered);
            doc.Append(BatchLatencySection(records.ToList()));
        }
        return doc;
    }

    public static ReportDocument NotRunSection(IReadOnlyList<NotRunEntry> notRun) => notRun.Count == 0 ? new ReportDocument()
        : new ReportDocument().AddHeading(2, "Not run here").AddTable(ReportColumns.NotRun, notRun);

    /// <summary>The series' own figures beside this run's, then what the memory columns measure.</summary>
    public static ReportDocument SeriesSection(IReadOnlyList<TransportSummary> summaries, IReadOnlyList<SeriesEntry> series)
    {
        var doc = new ReportDocument();
        if (series.Count > 0)
            doc.AddHeading(2, "For reference: the series (2014)")
                .AddParagraph("1,000,000 records, mean of 10 runs, on the author's two Windows machines with SQL Server — another\nmachine, database and network, and its TcpClient2 figure stopped the clock before the import ended.")
                .AddTable(SeriesColumns, series.OrderBy(e => e.Seconds)
                    .Select(e => (Entry: e, Here: summaries.FirstOrDefault(s => s.Transport == e.Transport && s.Records == 1_000_000 && s.Key.PayloadBytes == 0))));
        return doc.AddParagraph("Client and server peak memory is each process's resident high-water mark during the runs (the client\nruns inside the MSBuild process, so its figure includes MSBuild itself).");
    }

    /// <summary>The rows of one record count's main table, the first (fastest) marked.</summary>
    public static IEnumerable<RankedSummary> Ranked(IEnumerable<TransportSummary> rows)
    {
        var list = rows.ToList();
        var fastest = list.FirstOrDefault(s => !s.Unranked);
        return list.Select(s => new RankedSummary(s, ReferenceEquals(s, fastest)));
    }

    /// <summary>A peer (the databases' own tool) beside the fastest transport and the references at its record count.</summary>
    public sealed record PeerRow(TransportSummary Peer, TransportSummary? FastestTransport, TransportSummary? Pipelined, TransportSummary? Baseline);

    private static string PeerRatio(TransportSummary? row, TransportSummary peer) => row is null ? "–" : (row.Seconds.Mean / peer.Seconds.Mean).ToString("F2", Invariant);

    /// <summary>The peers' table: each peer, and how many times its time the fastest transport and the references took.</summary>
    public static readonly IReadOnlyList<ReportColumn<PeerRow>> PeerColumns =
    [
        new("peer", "Peer", r => r.Peer.Transport, Numeric: false),
        new("meanSeconds", "Mean (s)", r => r.Peer.Seconds.Mean.ToString("F3", Invariant)),
        new("ci95Seconds", "±95% CI (s)", r => r.Peer.Seconds.IntervalCell()),
        new("recordsPerSecond", "Records/s", r => r.Peer.MeanRecordsPerSecond.ToString("N0", Invariant)),
        new("fastestTransportRatio", "Fastest transport × peer",
            r => r.FastestTransport is { } f ? string.Create(Invariant, $"{PeerRatio(f, r.Peer)} ({f.Transport})") : "–"),
        new("pipelinedCopyRatio", "PipelinedCopy × peer", r => PeerRatio(r.Pipelined, r.Peer)),
        new("directCopyRatio", "DirectCopy × peer", r => PeerRatio(r.Baseline, r.Peer)),
    ];

    /// <summary>The series' own table, each row beside its transport's mean here at the same 1,000,000 records.</summary>
    public static readonly IReadOnlyList<ReportColumn<(SeriesEntry Entry, TransportSummary? Here)>> SeriesColumns =
    [
        new("method", "Method", r => r.Entry.Method, Numeric: false),
        new("seconds", "Seconds", r => r.Entry.Seconds.ToString("F2", Invariant)),
        new("transportHere", "Its transport here", r => r.Entry.Transport.Length > 0 ? r.Entry.Transport : "not run here", Numeric: false),
        new("secondsHere", "Here, 1,000,000 records (s)", r => r.Here is null ? "–" : r.Here.Seconds.Mean.ToString("F3", Invariant)),
    ];

    /// <summary>One batch size of a FindBatchSize sweep, and how it compares with the best.</summary>
    /// <summary>A batch size of a sweep: its runs, and how it stands against the best (<see cref="IsBest"/>: it is the best, with intervals to show it).</summary>
    public sealed record BatchSweepRow(int BatchSize, int Records, Summary Seconds, string AgainstBest, bool IsBest = false);

    /// <summary>The batch-size sweep's columns.</summary>
    public static readonly IReadOnlyList<ReportColumn<BatchSweepRow>> BatchSweepColumns =
    [
        new("batchSize", "Batch size", r => r.BatchSize.ToString("N0", Invariant)),
        new("batches", "Batches", r => (r.Records / r.BatchSize).ToString("N0", Invariant)),
        new("meanSeconds", "Mean (s)", r => r.Seconds.Mean.ToString("F3", Invariant)),
        new("ci95Seconds", "±95% CI (s)", r => r.Seconds.IntervalCell()),
        new("recordsPerSecond", "Records/s", r => (r.Records / r.Seconds.Mean).ToString("N0", Invariant)),
        new("againstBest", "Against the best", r => r.IsBest ? $"**{r.AgainstBest}**" : r.AgainstBest, Numeric: false) { HtmlCell = r => r.AgainstBest },
    ];

    /// <summary>", network: Wan (40 ms round trip, 100 Mbit/s), two hosts" when the run was not plain loopback on one host.</summary>
    public static string NetworkHeading(IReadOnlyDictionary<string, string> environment)
    {
        var network = environment.GetValueOrDefault("Network", "Loopback");
        var hosts = environment.GetValueOrDefault("Hosts", "One");
        var latency = environment.GetValueOrDefault("LatencyMs");
        var bandwidth = environment.GetValueOrDefault("BandwidthMbit");
        if (network == "Loopback" && hosts != "Two" && latency is null && bandwidth is null)
            return "";
        var profile = Network.NetworkProfile.Parse(network, latency, bandwidth);
        return $", network: {profile.Describe()}{(hosts == "Two" ? ", two hosts" : ", one host")}";
    }

    public static string ServerWorkLabel(string work) => work == nameof(Data.ServerWork.Range) ? "range query per batch" : "SELECT per ID";

    /// <summary>
    /// The warm-ups behind a table's means: its own, or those of the smallest count at its payload (warm-ups warm the code, not the
    /// data; each payload's pass has its own).
    /// </summary>
    private static string WarmupText(IReadOnlyList<TransportSummary> summaries, RunSize size)
    {
        var here = summaries.Where(s => s.Size == size).Max(s => s.WarmupRuns);
        var warmed = summaries.Where(s => s.WarmupRuns > 0 && s.Key.PayloadBytes == size.PayloadBytes).MinBy(s => s.Records);
        var (count, at) = here > 0 ? (here, "") : warmed is null ? (0, "") : (warmed.WarmupRuns, string.Create(Invariant, $" at {warmed.Records:N0} records"));
        return count switch
        {
            0 => "",
            1 => $" after a warm-up run{at}",
            _ => string.Create(Invariant, $" after {count} warm-up runs{at}"),
        };
    }

    /// <summary>The heading's account of how the server read: the mode of the run, and the transports that read otherwise.</summary>
    public static string ServerWorkHeading(IReadOnlyCollection<TransportSummary> rows)
    {
        if (rows.Count == 0)
            return "";
        // PipelinedCopyRange says how it reads in its name.
        var named = rows.Where(r => r.Key.Transport != PipelinedRange).ToList() is { Count: > 0 } rest ? rest : [.. rows];
        var mode = named.GroupBy(r => r.ServerWork).MaxBy(g => g.Count())!.Key;
        var others = named.Where(r => r.ServerWork != mode).Select(r => $"{r.Transport}: {ServerWorkLabel(r.ServerWork)}").ToList();
        return $"server reads: {ServerWorkLabel(mode)} ({mode})" + (others.Count > 0 ? $"; except {string.Join(", ", others)}" : "");
    }

    /// <summary>The swept transports, each batch size as a row (for the report's sweep charts).</summary>
    public static List<BatchSweep> Sweeps(IEnumerable<Measurement> measurements) =>
        measurements.GroupBy(m => (m.Transport, m.Records, m.PayloadBytes)).Where(g => g.Select(m => m.BatchSize).Distinct().Count() > 1)
            .Select(g => new BatchSweep(g.Key.Transport, g.Key.Records,
                Summarise(g.OrderBy(m => m.BatchSize)).OrderBy(r => r.Transport.Length).ThenBy(r => r.Transport, StringComparer.Ordinal).ToList()))
            .ToList();

    /// <summary>For each transport measured at several batch sizes (FindBatchSize): the sizes side by side, the best marked.</summary>
    public static string BatchSweep(IEnumerable<Measurement> measurements) => BatchSweepSection(measurements).Markdown(before: "\n");

    public static ReportDocument BatchSweepSection(IEnumerable<Measurement> measurements)
    {
        var doc = new ReportDocument();
        foreach (var sweep in measurements.Where(m => !m.Warmup).GroupBy(m => (m.Transport, m.Records, m.PayloadBytes))
                     .Where(g => g.Select(m => m.BatchSize).Distinct().Count() > 1))
        {
            var rows = sweep.GroupBy(m => m.BatchSize).OrderBy(g => g.Key)
                .Select(g => (BatchSize: g.Key, Seconds: Summary.Of(g.Select(m => m.ElapsedSeconds).ToList()))).ToList();
            var best = rows.MinBy(r => r.Seconds.Mean);
            // A "best" size needs intervals to stand on: with fewer runs the fastest mean is only named.
            var estimable = rows.All(r => r.Seconds.HasInterval);
            doc.AddHeading(2, string.Create(Invariant, $"Batch-size sweep: {sweep.Key.Transport}, {sweep.Key.Records:N0} records"));
            doc.AddTable(BatchSweepColumns, rows.Select(r => new BatchSweepRow(r.BatchSize, sweep.Key.Records, r.Seconds,
                !estimable ? r.BatchSize == best.BatchSize ? "fastest mean (too few runs to call it best)" : "too few runs to tell"
                : r.BatchSize == best.BatchSize ? "best" : Significance(Welch.PValue(best.Seconds, r.Seconds)), IsBest: estimable && r.BatchSize == best.BatchSize)));
        }
        return doc;
    }

    /// <summary>A few lines for the end of the build log.</summary>
    public static string ConsoleSummary(IReadOnlyList<TransportSummary> summaries)
    {
        var text = new StringBuilder();
        // As wide as the longest name (labels such as "RabbitMQClientTest (4 clients)" included), so the columns line up.
        var width = Math.Max(26, summaries.Select(s => s.Transport.Length).DefaultIfEmpty(0).Max());
        // The payload after the count where the rows carried one ("200 records of 1 MiB"), as wide as the widest.
        string Payload(TransportSummary s) => s.Key.PayloadBytes > 0 ? $" of {RowKey.PayloadSize(s.Key.PayloadBytes)}" : "";
        var payloadWidth = summaries.Select(s => Payload(s).Length).DefaultIfEmpty(0).Max();
        foreach (var s in summaries)
        {
            text.Append(Invariant, $"{s.Records,10:N0} records{Payload(s).PadRight(payloadWidth)}  {s.Transport.PadRight(width)} mean {s.Seconds.Mean,8:F3} s  median {s.Seconds.Median,8:F3} s  ");
            text.Append(s.Seconds.HasInterval ? string.Create(Invariant, $"±{s.Seconds.Ci95,6:F3}  sd {s.Seconds.StdDev,7:F3}") : $"no interval ({s.Seconds.Count} run{(s.Seconds.Count == 1 ? "" : "s")})");
            text.Append(Invariant, $"  {s.MeanRecordsPerSecond,9:N0} rec/s");
            text.Append(s.RatioToBaseline is { } r ? string.Create(Invariant, $"  {r,5:F2}× DirectCopy") : "");
            text.Append(s.RatioToPipelined is { } rp ? string.Create(Invariant, $"  {rp,5:F2}× {s.Reference}") : "");
            text.Append("  ").Append(Verdict(s));
            text.Append('\n');
        }
        return text.ToString().TrimEnd();
    }
}
