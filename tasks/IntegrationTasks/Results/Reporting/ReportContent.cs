using System.Globalization;
using System.Text;
using IntegrationTasks.Transfer;

namespace IntegrationTasks.Results;

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

    /// <summary>A record count left out by the transport's cap (one call per record): the transport, and the most records it runs.</summary>
    public (string Transport, int MaxRecords)? Cap { get; init; }

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
    public const string Baseline = References.Baseline;
    public const string Pipelined = References.Pipelined;
    public const string PipelinedRange = References.PipelinedRange;

    private static readonly CultureInfo Invariant = CultureInfo.InvariantCulture;

    public const double SignificanceLevel = Welch.SignificanceLevel;

    /// <summary>The runs with their rows' labels as their transport, for the sections that list runs by row (scaling).</summary>
    public static List<Measurement> Labelled(IEnumerable<Measurement> measurements)
    {
        var keyed = RowKey.Of(measurements);
        // Sections that list runs by row across the tables name the payload where the runs carried several.
        var payloads = keyed.Select(k => k.Key.PayloadBytes).Distinct().Count() > 1;
        return [.. keyed.Select(k => k.Run with { Transport = payloads ? k.Key.LabelWithPayload : k.Key.Label })];
    }

    /// <summary>The report's rows: <see cref="Summaries.Of"/>.</summary>
    public static List<TransportSummary> Summarise(IEnumerable<Measurement> measurements) => Summaries.Of(measurements);


    /// <summary>What each encoding costs over PipelinedCopy in this run: its transports' lowest overhead (the encoding's floor, with that transport).</summary>
    internal static string EncodingCosts(IReadOnlyList<TransportSummary> size)
    {
        var floors = size.Where(s => s is { Encoding: not null, OverheadMicrosPerRecord: not null })
            .GroupBy(s => s.Encoding!).Select(g => g.MinBy(s => s.OverheadMicrosPerRecord)!).OrderBy(s => s.OverheadMicrosPerRecord).ToList();
        return floors.Count < 2 ? ""
            : "\nWhat each encoding costs over PipelinedCopy in this run, by its cheapest transport (µs/record): "
              + string.Join("; ", floors.Select(s => string.Create(Invariant, $"{s.Encoding} {s.OverheadMicrosPerRecord:F2} ({s.Transport})"))) + ".\n";
    }

    /// <summary>Which rows were measured against PipelinedCopyRange (their server reads ranges in a per-ID run), and why.</summary>
    internal static string AgainstRangeLimit(IReadOnlyList<TransportSummary> size) =>
        size.Where(s => s.Reference == PipelinedRange && !s.Key.IsLimit).Select(s => s.Transport).ToList() is { Count: > 0 } rows
            ? $"\n{string.Join(", ", rows)}: {(rows.Count == 1 ? "its server reads" : "their servers read")} each batch with one range query whatever ServerWork says, "
              + $"so {(rows.Count == 1 ? "its" : "their")} × PipelinedCopy, paired ratio and overhead are against {PipelinedRange} (PipelinedCopy reading ranges too: "
              + "the same database work with no transport), not against PipelinedCopy's reads by ID.\n"
            : "";


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
        foreach (var records in ReportHeadline.MainFirst(summaries))
        {
            var size = records.Where(s => !s.IsPeer).ToList();
            var peers = records.Where(s => s.IsPeer).ToList();
            var runs = records.First().Seconds.Count;
            var warmup = WarmupText(summaries, records.Key);
            doc.AddHeading(2, string.Create(Invariant, $"{records.Key.Heading}, {ServerWorkHeading(size)}{NetworkHeading(environment)} ({RunsText(runs)}{warmup}, {(runs == 1 ? "verified" : "every run verified")} row by row)"));
            doc.AddTable(ReportColumns.SummaryFor(size), Ranked(size));
            if (ClientProcessText(size) is { Length: > 0 } clients)
                doc.AddParagraph(clients);
            doc.Append(TlsCostSection(TlsCost.Of(size)));
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

    /// <summary>Each transport's plaintext and TLS rows side by side (a Tls=false+true plan), with what TLS adds.</summary>
    public static ReportDocument TlsCostSection(IReadOnlyList<TlsCost> costs)
    {
        var doc = new ReportDocument();
        if (costs.Count == 0)
            return doc;
        string Ratio(TlsCost c) => (c.PairedRatio ?? c.Ratio).ToString("F2", Invariant);
        var (most, least) = (costs[0], costs[^1]);
        return doc.AddParagraph(string.Create(Invariant,
                $"What TLS costs each transport that carries it (the plaintext and the TLS pass, each run paired with its own pass's reference run nearest in time): most {most.Transport} ×{Ratio(most)}, least {least.Transport} ×{Ratio(least)}. Setup is connecting and the handshakes before the first request (an HTTP client's are inside its first request)."))
            .AddTable(TlsCostColumns, costs);
    }

    private static string PerMB((double Plain, double Tls)? cpu) =>
        cpu is { } c ? string.Create(Invariant, $"{c.Plain:F1} → {c.Tls:F1}") : "–";

    public static readonly IReadOnlyList<ReportColumn<TlsCost>> TlsCostColumns =
    [
        new("transport", "Transport", c => c.Transport, Numeric: false),
        new("plainSeconds", "Plaintext (s)", c => c.Plain.Seconds.Mean.ToString("F3", Invariant)),
        new("tlsSeconds", "TLS (s)", c => c.Tls.Seconds.Mean.ToString("F3", Invariant)),
        new("tlsRatio", "TLS × plaintext", c => c.Ratio.ToString("F2", Invariant)),
        new("pairedTlsRatio", "Paired TLS × plaintext", c => c.PairedRatio is { } r
            ? string.Create(Invariant, $"{r:F2}{(c.PairedRatioCi95 is { } ci ? $" ±{ci:F2}" : "")}") : "–"),
        new("tlsMicrosPerRecord", "TLS µs/record", c => c.MicrosPerRecord.ToString("F1", Invariant)),
        new("setupMs", "Setup ms", c => c.SetupMs is { } setup ? string.Create(Invariant, $"{setup.Plain:F1} → {setup.Tls:F1}") : "–"),
        new("clientCpuMsPerMB", "Client CPU ms/MB", c => PerMB(c.ClientCpuMsPerMB)),
        new("serverCpuMsPerMB", "Server CPU ms/MB", c => PerMB(c.ServerCpuMsPerMB)),
    ];

    public static ReportDocument NotRunSection(IReadOnlyList<NotRunEntry> notRun) => notRun.Count == 0 ? new ReportDocument()
        : new ReportDocument().AddHeading(2, "Not run").AddTable(ReportColumns.NotRun, notRun);

    /// <summary>The series' own figures beside this run's, then what the memory columns measure.</summary>
    public static ReportDocument SeriesSection(IReadOnlyList<TransportSummary> summaries, IReadOnlyList<SeriesEntry> series)
    {
        var doc = new ReportDocument();
        if (series.Count > 0)
            doc.AddHeading(2, "For reference: the series (2014)")
                .AddParagraph("1,000,000 records, mean of 10 runs, on the author's two Windows machines with SQL Server — another\nmachine, database and network, and its TcpClient2 figure stopped the clock before the import ended.")
                .AddTable(SeriesColumns, series.OrderBy(e => e.Seconds)
                    .Select(e => (Entry: e, Here: summaries.FirstOrDefault(s => s.Transport == e.Transport && s.Records == 1_000_000 && s.Key.PayloadBytes == 0))));
        return doc.AddParagraph(summaries.All(s => s.ClientOwnProcess)
            ? "Client and server peak memory is each process's resident high-water mark during a run: the client's process is its own\n(reset before each run where it is kept for a transport's runs), the server's is its process tree."
            : "Client and server peak memory is each process's resident high-water mark during the runs (a client that ran inside the\nMSBuild process has MSBuild's figure, the same for every row).");
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
        new("transportHere", "The suite's transport", r => r.Entry.Transport.Length > 0 ? r.Entry.Transport : "not run", Numeric: false),
        new("secondsHere", "This run, 1,000,000 records (s)", r => r.Here is null ? "–" : r.Here.Seconds.Mean.ToString("F3", Invariant)),
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
        var cpus = environment.GetValueOrDefault("HostCpus");
        return $", network: {profile.Describe()}{(hosts == "Two" ? ", two hosts" : ", one host")}{(hosts == "Two" && cpus is not null ? $" ({cpus})" : "")}";
    }

    public static string ServerWorkLabel(string work) => work == nameof(Data.ServerWork.Range) ? "range query per batch" : "SELECT per ID";

    /// <summary>What each client's process had run before its timed transfer, the same for every row of a table (said once for it).</summary>
    public static string ClientProcessText(IReadOnlyList<TransportSummary> rows) =>
        rows.Select(r => r.ClientMode).Distinct().ToList() switch
        {
            [ClientProcessMode.Fresh] => "Each client ran in a process of its own, started before its timing, that had run nothing before: its time includes compiling its code (the JIT's first pass); its memory, allocations and collections are its own.",
            [ClientProcessMode.Warmed] => "Each client ran in a process of its own, started before its timing, that first ran a short warm-up of the same transport (untimed, its rows then removed): its memory, allocations and collections are its own.",
            [ClientProcessMode.Transport] => "Each transport's client ran in a process of its own, kept for its runs: each run followed the same transport's earlier runs (its warm-up runs first), its heap collected before its timing; its memory, allocations and collections are its own.",
            [ClientProcessMode.Build] => "Every client ran inside the build's own process, after whatever the build ran before it: its peak memory is the build's.",
            [] => "",
            _ => "The clients' processes differed between rows (recorded per run: clientProcess in results.csv).",
        };

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
        string Payload(TransportSummary s) => s.Key.PayloadBytes > 0 ? $" of {RunKey.PayloadSize(s.Key.PayloadBytes)}" : "";
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
