using System.Globalization;
using IntegrationTasks.Transfer;

namespace IntegrationTasks.Results;

/// <summary>A transport at one number of clients at once: its throughput, its batches' waits, what its server spent.</summary>
public sealed record LoadPoint(int Clients, int Records, Summary Seconds, LatencySummary? Batch, LatencySummary? Reply)
{
    public double RecordsPerSecond => Records / Seconds.Mean;

    /// <summary>Cores the server's processes kept busy on average (CPU seconds over wall seconds); null where not measured.</summary>
    public double? ServerCores { get; init; }
    public double ClientCores { get; init; }
    public int? ServerThreads { get; init; }
    public long? ServerQueue { get; init; }

    /// <summary>The most client connections the server held open at once (sampled).</summary>
    public int? ServerConnections { get; init; }

    /// <summary>The most requests that waited for the server at once (its broker queue, its inbox); null where it cannot tell.</summary>
    public long? RequestsWaiting { get; init; }

    /// <summary>The server's peak resident memory over these runs (its process tree); null where not measured.</summary>
    public long? ServerPeakBytes { get; init; }

    /// <summary>The most the client process's memory grew during one of these runs; null where not measured.</summary>
    public long? ClientGrowthBytes { get; init; }

    /// <summary>Mean time over PipelinedCopy's at the same clients and records (N copies at once); null without it.</summary>
    public double? RatioToPipelined { get; init; }

    /// <summary>The share of its clients' time spent waiting for a batch's transaction to begin (SQLite: its one write lock); null where not measured.</summary>
    public double? ClientLockShare { get; init; }

    /// <summary>The server's coded warnings and errors over these runs, by code.</summary>
    public IReadOnlyDictionary<string, int> ServerErrors { get; init; } = new Dictionary<string, int>();

    /// <summary>Reconnections the clients made in all over these runs (a dropped client that resumed).</summary>
    public int Reconnects { get; init; }
}

/// <summary>One transport (at one open-loop rate, or closed loop) measured at several client counts.</summary>
public sealed record LoadCurve(string Transport, double? Rate, IReadOnlyList<LoadPoint> Points)
{
    public string Label => Rate is { } rate ? string.Create(CultureInfo.InvariantCulture, $"{Transport} (open loop {rate:0.##}/s each)") : Transport;

    /// <summary>What the curve's runs measure: a reference's is drawn grey and said nothing of.</summary>
    public RunKind Kind { get; init; }
    public bool IsReference => Kind != RunKind.Transport;
}

/// <summary>Many clients at once: for each transport its points against clients (the runs the load report reads).</summary>
public static class ClientLoad
{
    public static List<LoadCurve> Curves(IEnumerable<Measurement> measurements)
    {
        var runs = measurements.Where(m => !m.Warmup && m.Completed).ToList();
        var curves = new List<LoadCurve>();
        foreach (var transport in runs.GroupBy(m => (m.Transport, m.Rate)).Where(g => g.Any(m => m.Clients > 1)))
        {
            // Load grows the records with the clients (one curve); RunAll keeps each record count (a curve for each).
            var oneRecordCountEach = transport.GroupBy(m => m.Clients).All(g => g.Select(m => m.Records).Distinct().Count() == 1);
            foreach (var curve in oneRecordCountEach ? [transport.ToList()] : transport.GroupBy(m => m.Records).Select(g => g.ToList()))
            {
                var points = curve.GroupBy(m => (m.Clients, m.Records)).OrderBy(g => g.Key.Clients)
                    .Select(g => Point(g.ToList(), runs)).ToList();
                if (points.Count > 1 || points[0].Clients > 1)
                    curves.Add(new LoadCurve(transport.Key.Transport, transport.Key.Rate, points) { Kind = RowKey.KindOf(transport.First()) });
            }
        }
        return [.. curves.OrderBy(c => c.IsReference ? 1 : 0).ThenBy(c => c.Label, StringComparer.Ordinal)];
    }

    private static LoadPoint Point(IReadOnlyList<Measurement> runs, IReadOnlyList<Measurement> all)
    {
        var (clients, records) = (runs[0].Clients, runs[0].Records);
        var seconds = Summary.Of(runs.Select(r => r.ElapsedSeconds).ToList());
        var pipelined = all.Where(m => m.Transport == References.Pipelined && m.Clients == clients && m.Records == records && m.Rate is null)
            .Select(m => m.ElapsedSeconds).ToList();
        var serverCpu = runs.Where(r => r.ServerCpuSeconds is not null).ToList();
        return new LoadPoint(clients, records, seconds, LatencySummary.Merge(runs.Select(r => r.BatchLatency)), LatencySummary.Merge(runs.Select(r => r.ReplyLatency)))
        {
            ServerCores = serverCpu.Count > 0 ? serverCpu.Average(r => r.ServerCpuSeconds!.Value / r.ElapsedSeconds) : null,
            ClientCores = runs.Average(r => r.ClientCpuSeconds / r.ElapsedSeconds),
            ServerThreads = runs.Max(r => r.ServerThreadPoolMaxThreads),
            ServerQueue = runs.Max(r => r.ServerThreadPoolMaxQueue),
            ServerConnections = runs.Max(r => r.ServerMaxConnections),
            RequestsWaiting = runs.Max(r => r.ServerMaxRequestsWaiting),
            ServerPeakBytes = runs.Max(r => r.ServerPeakBytes),
            ClientGrowthBytes = runs.Max(r => r.ClientPeakGrowthBytes),
            ServerErrors = runs.SelectMany(r => r.ServerErrors ?? []).GroupBy(e => e.Key).ToDictionary(g => g.Key, g => g.Sum(e => e.Value)),
            Reconnects = runs.Sum(r => r.Reconnects ?? 0),
            ClientLockShare = runs.All(r => r.ClientLockWaitSeconds is not null)
                ? runs.Average(r => r.ClientLockWaitSeconds!.Value / (r.ElapsedSeconds * r.Clients)) : null,
            RatioToPipelined = pipelined.Count > 0 && runs[0].Transport != References.Pipelined ? seconds.Mean / pipelined.Average() : null,
        };
    }
}
