using System.Text.Json;
using System.Text.Json.Serialization;

namespace IntegrationTasks.Transfer;

/// <summary>One verified repetition of one transport at one record count.</summary>
public sealed record Measurement
{
    /// <summary>What this run is, field by field (written first in every file that holds a run; read back from none: it is made from the fields below).</summary>
    [JsonPropertyOrder(-1)]
    public RunKey Key => new(Transport, Kind ?? RunKey.KindByName(Transport), Records, BatchSize, PayloadBytes ?? 0,
        PayloadBytes > 0 ? PayloadKind ?? RunKey.DefaultPayloadKind : "", Clients, ClientMachines ?? 1, Rate, ServerReads,
        Provider.Length > 0 ? Provider : RunKey.DefaultProvider, ThroughRelay == true ? Network ?? "Custom" : RunKey.Loopback,
        ThroughRelay == true ? LatencyMs : null, Fault ?? RunKey.NoFault, Tls == true, Hosts ?? RunKey.OneHost, HostCpus ?? "");

    public required string Transport { get; init; }

    /// <summary>What the run measures (null in results recorded before it was: the report then tells by the transport's name).</summary>
    public RunKind? Kind { get; init; }
    public string Provider { get; init; } = "";
    public required int Records { get; init; }
    public int BatchSize { get; init; }

    /// <summary>Each row's payload in bytes and its kind (Bytes or Text), as verification found them (null: none, the series' rows).</summary>
    public int? PayloadBytes { get; init; }
    public string? PayloadKind { get; init; }

    /// <summary>Clients run at once, each on its share of the batches (1: the series' single client; logs from before it was recorded).</summary>
    public int Clients { get; init; } = 1;

    /// <summary>Open loop: the batches per second each client was scheduled to send (null: closed loop).</summary>
    public double? Rate { get; init; }

    /// <summary>How the server read its batches: PerRecord (one SELECT per ID) or Range; null in logs written before it was recorded (PerRecord).</summary>
    public string? ServerWork { get; init; }

    /// <summary><see cref="ServerWork"/>, with logs from before it was recorded read as PerRecord.</summary>
    [JsonIgnore]
    public string ServerReads => ServerWork ?? nameof(Data.ServerWork.PerRecord);

    /// <summary>
    /// The seed of the shuffled round order when RunAll interleaved the repetitions (repetition r of every transport before r+1 of
    /// any; <see cref="Repetition"/> is then the round); null when each transport's repetitions ran together.
    /// </summary>
    public int? RoundSeed { get; init; }

    /// <summary>True when the client talked to its server through the delay relay (latency added, faults injected there).</summary>
    public bool? ThroughRelay { get; init; }

    /// <summary>The round trip the relay added, in milliseconds (null when there was no relay).</summary>
    public double? LatencyMs { get; init; }

    /// <summary>The network profile the relay shaped the run with (-p:Network), when there was a relay.</summary>
    public string? Network { get; init; }

    /// <summary>Run in a Tls=true build: a transport's traffic went over TLS, a reference ran as its pair (null: plaintext, or a log from before it was recorded).</summary>
    public bool? Tls { get; init; }

    /// <summary>Two simulated hosts ("Two"), and their own CPUs ("0/1"); null: one host, or its CPUs shared.</summary>
    public string? Hosts { get; init; }
    public string? HostCpus { get; init; }

    /// <summary>The fault injected into this run (Reset, Silence, KillServer); null when none.</summary>
    public string? Fault { get; init; }

    /// <summary>
    /// Whether the fault asked for landed (null when no fault was asked for, or in logs from before it was recorded). A run whose fault
    /// was not injected (the server sent fewer bytes than the threshold) says nothing about the fault and is reported as such.
    /// </summary>
    public bool? FaultInjected { get; init; }

    /// <summary>The fault's threshold (bytes taken from the server), the bytes the server had sent by the run's end, and when the fault landed.</summary>
    public long? FaultAfterBytes { get; init; }
    public long? FaultBytesFromServer { get; init; }
    public double? FaultInjectedAtSeconds { get; init; }

    /// <summary>How many times the client reconnected and resumed (null: none, or a log from before it was recorded).</summary>
    public int? Reconnects { get; init; }

    /// <summary>From each break to the first commit after it, summed (null when nothing broke).</summary>
    public double? RecoverySeconds { get; init; }

    /// <summary>
    /// The code the transfer failed with under an injected fault (null when it completed). Such a run's ClientTable was checked to hold
    /// whole batches only, none twice. It is kept out of every statistic.
    /// </summary>
    public string? FailedWith { get; init; }

    /// <summary>What the verification found: rows equal to ServiceTable's, and rows there twice (null in logs from before they were recorded).</summary>
    public int? RowsMatched { get; init; }
    public int? RowsDuplicated { get; init; }

    /// <summary>Of a failed run: the records it committed (in whole batches) before it gave up.</summary>
    public int? RecordsCommitted { get; init; }

    [JsonIgnore]
    public bool Completed => FailedWith is null;

    public int Repetition { get; init; }
    public required double ElapsedSeconds { get; init; }
    public double FirstCommitSeconds { get; init; }

    /// <summary>Connecting, handshakes, declarations: the part of the time before the first request could go out.</summary>
    public double SetupSeconds { get; init; }
    public double ClientCpuSeconds { get; init; }
    public long ClientAllocatedBytes { get; init; }
    public int ThreadPoolMaxThreads { get; init; }
    public long ThreadPoolMaxQueue { get; init; }
    public long ThreadPoolCompletedItems { get; init; }

    /// <summary>Methods the client process's JIT compiled during the run, and the time it spent on them: code still warming up.</summary>
    public long? ClientJitMethods { get; init; }
    public double? ClientJitSeconds { get; init; }

    /// <summary>Time the client process was paused by its GC during the run, and its collections by generation (0, 1, 2).</summary>
    public double? ClientGcPauseSeconds { get; init; }
    public int[]? ClientGcCollections { get; init; }

    /// <summary>
    /// CPU time the machine's hypervisor gave to something else while its CPUs had work, during the run, summed over the CPUs (Linux's
    /// steal); no process is charged for it. Null where it was not readable.
    /// </summary>
    public double? HostStealSeconds { get; init; }

    /// <summary>
    /// CPU the server's processes used during this run's timed transfer, read by the client at its start and end; where the client could
    /// not (a server started again under KillServer), since the same server's previous run (null for its first one, or no server).
    /// </summary>
    public double? ServerCpuSeconds { get; init; }

    /// <summary>
    /// The broker the transfer went through (a process the build started: RabbitMQ's node, nats-server, redis-server), over the timed
    /// transfer: its CPU, peak resident memory and the bytes it sent to storage. Null without one, or where it was started again mid-run.
    /// </summary>
    public double? BrokerCpuSeconds { get; init; }
    public long? BrokerPeakBytes { get; init; }
    public long? BrokerStorageWriteBytes { get; init; }

    /// <summary>What the server reported of its side for this repetition (null when it reported nothing).</summary>
    public long? ServerAllocatedBytes { get; init; }
    public long? ServerThreadPoolCompletedItems { get; init; }
    public int? ServerThreadPoolMaxThreads { get; init; }
    public long? ServerThreadPoolMaxQueue { get; init; }

    /// <summary>The coded warnings and errors the server logged during this repetition, by code; null where its log was not read.</summary>
    public SortedDictionary<string, int>? ServerErrors { get; init; }

    /// <summary>The most client connections the server held open at once since it started (sampled every 100 ms; null when not reported).</summary>
    public int? ServerMaxConnections { get; init; }

    /// <summary>The most requests that waited for the server at once since it started, where it can tell (RabbitMQ's request queue, the file inbox).</summary>
    public long? ServerMaxRequestsWaiting { get; init; }
    public long BytesSent { get; init; }
    public long BytesReceived { get; init; }

    /// <summary>True when the transport could not measure its bytes on the wire (BytesSent and BytesReceived then mean nothing).</summary>
    public bool? BytesNotMeasured { get; init; }
    public long ClientPeakBytes { get; init; }

    /// <summary>
    /// How much the client process's resident memory grew during this run: its peak less what it held at the start (the MSBuild
    /// process keeps what earlier runs left, which <see cref="ClientPeakBytes"/> includes); null where not measured.
    /// </summary>
    public long? ClientPeakGrowthBytes { get; init; }

    /// <summary>
    /// The process the client ran in, and what it was: Build (the build's own), Fresh (its own, nothing run before) or Warmed (its own,
    /// after the same transport's warm-up); null in results from before clients had processes (the build's).
    /// </summary>
    public int? ClientProcessId { get; init; }
    public string? ClientProcess { get; init; }

    /// <summary>The client process's start, up to its run's task (runtime, loading, its request), and its warm-up: both before the timing.</summary>
    public double? ClientStartSeconds { get; init; }
    public double? ClientWarmupSeconds { get; init; }

    /// <summary>The runs the client's process made before this one (0 for a process of its own; the transport's earlier runs when kept).</summary>
    public int? ClientRunsBefore { get; init; }

    /// <summary><see cref="ClientCpuSeconds"/> split into user and kernel time (null before it was recorded).</summary>
    public double? ClientCpuUserSeconds { get; init; }
    public double? ClientCpuSystemSeconds { get; init; }

    /// <summary>The most threads the client process had at once during the run, the pool's and every other (null where not read).</summary>
    public int? ClientMaxThreads { get; init; }
    public long? ServerPeakBytes { get; init; }
    /// <summary>How long each batch waited, request sent to transaction committed (null where the transport does not mark its sends).</summary>
    public LatencySummary? BatchLatency { get; init; }

    /// <summary>Request sent to reply fully received, before the import (null where the transport does not mark its replies).</summary>
    public LatencySummary? ReplyLatency { get; init; }

    /// <summary>The agreed start of a run that several client machines made at once (StartAt); null otherwise.</summary>
    public DateTimeOffset? StartAt { get; init; }

    /// <summary>The client machine that made this run (ClientMachine); null for a run of one machine.</summary>
    public string? ClientMachine { get; init; }

    /// <summary>Time the client's batch transactions waited to begin, summed over its clients (SQLite: its one write lock); null before it was recorded.</summary>
    public double? ClientLockWaitSeconds { get; init; }

    /// <summary>How many client machines' runs this one merges (-t:Report over their results); null for one machine's.</summary>
    public int? ClientMachines { get; init; }

    public bool Verified { get; init; }

    /// <summary>The first repetition (JIT, caches, connection pools warming up): recorded, but kept out of the statistics.</summary>
    public bool Warmup { get; init; }
    public DateTimeOffset Timestamp { get; init; } = DateTimeOffset.UtcNow;

    public double RecordsPerSecond => ElapsedSeconds > 0 ? Records / ElapsedSeconds : 0;
}

/// <summary>Measurements as JSON lines: appended one per repetition, read back for the report.</summary>
public static class MeasurementLog
{
    internal static JsonSerializerOptions Json => JsonFiles.Options;

    public static void Append(string path, Measurement measurement)
    {
        Directory.CreateDirectory(Path.GetDirectoryName(Path.GetFullPath(path))!);
        File.AppendAllText(path, JsonSerializer.Serialize(measurement, Json) + "\n");
    }

    /// <summary>One client run's figures, handed from the client task to RecordMeasurement.</summary>
    public static void WriteSingle(string path, Measurement measurement)
    {
        Directory.CreateDirectory(Path.GetDirectoryName(Path.GetFullPath(path))!);
        File.WriteAllText(path, JsonSerializer.Serialize(measurement, Json));
    }

    public static Measurement ReadSingle(string path)
    {
        try
        {
            return JsonSerializer.Deserialize<Measurement>(File.ReadAllText(path), Json) ?? throw new JsonException("null");
        }
        catch (Exception e) when (e is IOException or JsonException)
        {
            throw new IntegrationException(ErrorCodes.ResultsUnreadable, $"The client run's figures at {path} cannot be read: {e.Message}", e);
        }
    }

    public static List<Measurement> Read(string path)
    {
        if (!File.Exists(path))
            throw new IntegrationException(ErrorCodes.ResultsUnreadable, $"No measurements at {path}: nothing ran.");
        var list = new List<Measurement>();
        var number = 0;
        foreach (var line in File.ReadLines(path))
        {
            number++;
            if (string.IsNullOrWhiteSpace(line))
                continue;
            try
            {
                list.Add(JsonSerializer.Deserialize<Measurement>(line, Json)
                         ?? throw new JsonException("null"));
            }
            catch (JsonException e)
            {
                throw new IntegrationException(ErrorCodes.ResultsUnreadable, $"{path}, line {number}, is not a measurement: {e.Message}", e);
            }
        }
        return list;
    }
}
