using System.Globalization;
using System.Text.Json.Serialization;
using IntegrationTasks.Transfer;

namespace IntegrationTasks.Results;

/// <summary>
/// What a row of the report is, as fields: a transport (its name and kind) at one concurrency — clients, client machines, an open
/// loop's rate — and, where a sweep varied them, one batch size or one added round trip — and the payload its rows carried (every
/// table holds one payload, and says it in its heading, so the label leaves it out). <see cref="Label"/> is made from these for
/// display only; nothing reads a label back.
/// </summary>
public sealed record RowKey(string Transport, RunKind Kind, int Clients = 1, int ClientMachines = 1, double? Rate = null, int? BatchSize = null,
    double? LatencyMs = null,
    [property: JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] int PayloadBytes = 0,
    [property: JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] string? PayloadKind = null,
    [property: JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] bool Tls = false)
{
    /// <summary>The same row without its payload: a transport's rows at different payloads compared with each other.</summary>
    public RowKey WithoutPayload() => this with { PayloadBytes = 0, PayloadKind = null };

    /// <summary>The peer: moves the rows with the databases' own tools, reported beside the transports, never ranked among them.</summary>
    [JsonIgnore] public bool IsPeer => Kind == RunKind.Peer;

    /// <summary>PipelinedCopy in either reading: a limit, against which transports' overheads are measured.</summary>
    [JsonIgnore] public bool IsLimit => Kind == RunKind.Reference;

    /// <summary>DirectCopy, PipelinedCopy and the peers: references, drawn grey in the charts.</summary>
    [JsonIgnore] public bool IsReference => Kind != RunKind.Transport;

    /// <summary>"TcpClient2", "TcpClient2 (16 clients, open loop 50/s each)", "TcpClient2 (batch 100)", "TcpClient2 (RTT 20 ms)", "RestJson (TLS)".</summary>
    public string Label
    {
        get
        {
            var parts = new List<string>();
            if (Clients > 1)
                parts.Add(string.Create(CultureInfo.InvariantCulture, $"{Clients} clients"));
            if (ClientMachines > 1)
                parts.Add(string.Create(CultureInfo.InvariantCulture, $"{ClientMachines} client machines"));
            if (Rate is { } rate)
                parts.Add(string.Create(CultureInfo.InvariantCulture, $"open loop {rate:0.##}/s{(Clients > 1 ? " each" : "")}"));
            // A transport's traffic went over TLS; a reference's moved nothing over a wire and is only the TLS runs' pair.
            if (Tls)
                parts.Add(Kind == RunKind.Transport ? "TLS" : "TLS pass");
            var label = parts.Count > 0 ? $"{Transport} ({string.Join(", ", parts)})" : Transport;
            return BatchSize is { } batch ? string.Create(CultureInfo.InvariantCulture, $"{label} (batch {batch})")
                : LatencyMs is { } latency ? LatencyLabel(label, latency)
                : label;
        }
    }

    /// <summary>Runs of a transport at several added latencies are rows of their own, "TcpClient2 (RTT 20 ms)", never averaged together.</summary>
    public static string LatencyLabel(string transport, double latencyMs) => string.Create(CultureInfo.InvariantCulture, $"{transport} (RTT {latencyMs:0.###} ms)");

    /// <summary>The label with the payload after it, for lists that hold rows of several payloads ("TcpClient2 (payload 1 MiB)").</summary>
    [JsonIgnore]
    public string LabelWithPayload => PayloadBytes > 0 ? $"{Label} (payload {RunKey.PayloadSize(PayloadBytes)})" : Label;

    /// <summary>A run's kind as recorded; for results recorded before runs carried it, told by the transport's name.</summary>
    public static RunKind KindOf(Measurement run) => run.Kind ?? KindOf(run.Transport);

    /// <summary>A transport's kind by its name: for runs recorded before they carried their kind.</summary>
    public static RunKind KindOf(string transport) => RunKey.KindByName(transport);

    /// <summary>A run's row, apart from the sweeps (<see cref="Of"/> adds them).</summary>
    public static RowKey Concurrency(Measurement run) =>
        new(run.Transport, KindOf(run), run.Clients, run.ClientMachines ?? 1, run.Rate, PayloadBytes: run.PayloadBytes ?? 0,
            PayloadKind: run.PayloadBytes > 0 ? run.PayloadKind ?? nameof(Data.PayloadKind.Bytes) : null, Tls: run.Tls == true);

    /// <summary>
    /// Every run with its row. Runs of one row at several batch sizes (a FindBatchSize sweep) are rows of their own, one a batch
    /// size, so that they are never averaged together; else at several added round trips (a LatencySweep), one a round trip.
    /// </summary>
    public static List<(RowKey Key, Measurement Run)> Of(IEnumerable<Measurement> runs)
    {
        var keyed = runs.Select(run => (Key: Concurrency(run), Run: run)).ToList();
        var swept = keyed.GroupBy(k => k.Key).Where(g => g.Select(k => k.Run.BatchSize).Distinct().Count() > 1).Select(g => g.Key).ToHashSet();
        var delayed = keyed.GroupBy(k => k.Key).Where(g => g.Select(k => k.Run.LatencyMs).Distinct().Count() > 1).Select(g => g.Key).ToHashSet();
        return [.. keyed.Select(k => swept.Contains(k.Key) ? (k.Key with { BatchSize = k.Run.BatchSize }, k.Run)
            : delayed.Contains(k.Key) ? (k.Key with { LatencyMs = k.Run.LatencyMs ?? 0 }, k.Run)
            : k)];
    }
}
