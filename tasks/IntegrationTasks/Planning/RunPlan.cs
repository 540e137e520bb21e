using IntegrationTasks.Transfer;
using Microsoft.Build.Utilities;

namespace IntegrationTasks.Planning;

/// <summary>Interleaved: round r of every transport before round r+1 of any. By transport: each transport's runs together.</summary>
public enum RunOrder { Interleaved, ByTransport }

/// <summary>What the plan needs of a transport: its definition's metadata and the record counts it runs at (after CapRecordCounts).</summary>
public sealed record PlanTransport(string Name, IReadOnlyList<int> RecordCounts, RunKind Kind = RunKind.Transport, string ServerTarget = "",
    string PortProperty = "", int ServerPort = 0, bool OneClient = false, string ServerWork = "", string ClientTarget = "", bool CarriesTls = false)
{
    /// <summary>Runs in a TLS pass: its traffic goes over TLS, or it moves nothing over a wire (a reference, the baseline, a peer).</summary>
    public bool RunsOverTls => CarriesTls || Kind != RunKind.Transport;

    public bool HasServer => ServerTarget.Length > 0 && Kind != RunKind.Peer;

    /// <summary>
    /// A transport as RunAll's items carry it (TransportDefinition metadata, RecordCounts '+'-separated, Peer for the peer; Kind, when
    /// given, says what it is outright).
    /// </summary>
    public static PlanTransport FromItem(ITaskItem item)
    {
        var definition = TransportDefinition.From(item);
        return new(item.ItemSpec,
            item.GetMetadata("RecordCounts").Length == 0 ? [] : RunMatrix.ParseRecordCounts([item.GetMetadata("RecordCounts")]),
            Enum.TryParse<RunKind>(item.GetMetadata("Kind"), out var kind) ? kind
            : item.GetMetadata("Peer") == "true" ? RunKind.Peer : definition.Reference ? RunKind.Reference
            : definition.Baseline ? RunKind.Baseline : RunKind.Transport,
            definition.ServerTarget, definition.PortProperty, definition.ServerPort, definition.OneClient, definition.ServerWork, definition.ClientTarget,
            definition.Tls);
    }
}

/// <summary>
/// One run of a transport: its size, its clients and its repetition (0: a warm-up, the <paramref name="WarmupRun"/>th; the warm-ups
/// differ in it alone, so that MSBuild neither batches them into one call nor skips one as already built), its batch size, and the
/// round trip the relay adds where a sweep varies it (null: the run's network as set).
/// </summary>
public sealed record PlannedRun(int Records, int TotalBatches, int Clients, int Repetition, int WarmupRun = 0, int BatchSize = 0, double? LatencyMs = null);

/// <summary>A server of a group: started before its runs, stopped after; on <see cref="Port"/> (given in its transport's PortProperty) unless 0, its configured one.</summary>
public sealed record ServerStep(int Group, string ServerTarget, PlanTransport Transport, int Port = 0);

/// <summary>
/// A run in the order it runs: its group, its round (0: the warm-ups; by transport, its repetition) and its place among the round's
/// <see cref="RunsInRound"/>; <see cref="TransportOrdinal"/> is set on a by-transport group's first run, which says the transport's progress.
/// </summary>
public sealed record RunStep(int Group, PlanTransport Transport, PlannedRun Run, int Round, int Position, int RunsInRound, int TransportOrdinal = 0)
{
    public bool FirstOfRound => Position == 1;
}

/// <summary>
/// RunAll's runs as data: groups run one after the other, each starting its servers, running its runs in order and stopping its
/// servers. Interleaved is one group of every server and run; by transport, a group per transport. <see cref="OtherServerUsers"/>:
/// the transports that share a server started for another (told as failed with the server's reason if it does not start).
/// </summary>
public sealed record RunPlan(RunOrder Order, int Seed, IReadOnlyList<ServerStep> Servers, IReadOnlyList<RunStep> Runs,
    IReadOnlyList<ServerStep> OtherServerUsers, int Transports);

/// <summary>
/// What a plan varies, apart from the transports: the axes every run is crossed with. <see cref="BatchSizes"/> (FindBatchSize) and
/// <see cref="LatenciesMs"/> (LatencySweep) are axes when given, else every run has <see cref="BatchSize"/> and the network as set;
/// with <see cref="RecordsPerClient"/> (Load) each client count runs at that many records a client instead of every record count.
/// </summary>
public sealed record RunPlanSettings(IReadOnlyList<int> ClientCounts, int BatchSize, int Repetitions, int WarmupRuns, RunOrder Order, int Seed,
    int ReferenceEvery = 0, IReadOnlyList<int>? BatchSizes = null, IReadOnlyList<double>? LatenciesMs = null, int RecordsPerClient = 0);

/// <summary>Record counts × client counts × repetitions of one transport.</summary>
public static class RunMatrix
{
    /// <summary>RecordCounts as numbers, in order ('+' or ';' between them: -p:RecordCounts=20000+50000 needs no shell quoting).</summary>
    public static List<int> ParseRecordCounts(IEnumerable<string> items) => Counts.Parse(items, "RecordCounts");

    /// <summary>The warm-up runs before each transport's measured ones.</summary>
    public static int WarmupCount(bool warmup, int warmupRuns)
    {
        if (warmup && warmupRuns < 1)
            throw new IntegrationException(ErrorCodes.InvalidParameter, $"WarmupRuns must be at least 1 (was {warmupRuns}); -p:Warmup=false runs none.");
        return warmup ? warmupRuns : 0;
    }

    /// <summary>
    /// Record counts (smallest first) × batch sizes × client counts × round trips × repetitions; a count with fewer batches than clients
    /// is left out and said so. With <paramref name="recordsPerClient"/> each client count runs at that many records a client, where
    /// that is one of the record counts. The warm-ups of each client count come with the first run it has: they warm the code, which is
    /// the same at every count.
    /// </summary>
    public static List<PlannedRun> Plan(IReadOnlyList<int> recordCounts, IReadOnlyList<int> clientCounts, int batchSize, int repetitions, int warmupRuns,
        TaskLoggingHelper? log, IReadOnlyList<int>? batchSizes = null, IReadOnlyList<double>? latenciesMs = null, int recordsPerClient = 0)
    {
        IReadOnlyList<int> sizes = batchSizes is { Count: > 0 } ? batchSizes : [batchSize];
        IReadOnlyList<double?> latencies = latenciesMs is { Count: > 0 } ? [.. latenciesMs.Select(l => (double?)l)] : [null];
        if (sizes.Any(size => size < 1))
            throw new IntegrationException(ErrorCodes.InvalidParameter, $"BatchSize must be at least 1 (was {sizes.Min()}).");
        if (repetitions < 1)
            throw new IntegrationException(ErrorCodes.InvalidParameter, $"Repetitions must be at least 1 (was {repetitions}).");
        var sized = recordsPerClient > 0
            ? clientCounts.Select(clients => (Records: clients * recordsPerClient, Clients: clients)).Where(p => recordCounts.Contains(p.Records)).ToList()
            : [.. recordCounts.Order().SelectMany(records => clientCounts.Select(clients => (Records: records, Clients: clients)))];
        var runs = new List<PlannedRun>();
        var warmedClientCounts = new HashSet<int>();
        foreach (var (records, clients) in sized)
            foreach (var size in sizes)
            {
                if (records % size != 0)
                    throw new IntegrationException(ErrorCodes.InvalidParameter,
                        $"{records} records do not divide into batches of {size}; choose RecordCounts that are multiples of BatchSize.");
                var batches = records / size;
                if (clients > batches)
                {
                    log?.LogMessage(MessageImportance.High, "Not run: {0:N0} records at {1} clients ({2} batches of {3}: each client needs a batch of its own).",
                        records, clients, batches, size);
                    continue;
                }
                foreach (var latency in latencies)
                {
                    if (warmedClientCounts.Add(clients))
                        for (var warmupRun = 1; warmupRun <= warmupRuns; warmupRun++)
                            runs.Add(new PlannedRun(records, batches, clients, 0, warmupRun, size, latency));
                    for (var repetition = 1; repetition <= repetitions; repetition++)
                        runs.Add(new PlannedRun(records, batches, clients, repetition, 0, size, latency));
                }
            }
        if (runs.Count == 0)
            throw new IntegrationException(ErrorCodes.InvalidParameter, clientCounts.Count == 0 ? "Clients is empty."
                : recordCounts.Count == 0 ? "RecordCounts is empty." : $"No record count has a batch for each of the clients asked for ({string.Join(", ", clientCounts)}).");
        return runs;
    }
}

/// <summary>
/// Turns RunAll's selection into its <see cref="RunPlan"/>. Interleaved: every transport's warm-ups first (the first of each, then
/// the second), then round 1 — repetition 1 of every transport, record count and client count, in an order shuffled for that round —
/// then round 2, and so on: a slow stretch of the machine then falls on every transport alike instead of on the one whose turn it
/// was, and drops out of their ratios. Each server is started once for all rounds, so servers that read one port property (the
/// TCP generations' Port) are given free ports of their own. By transport: each transport's runs together, its server around them.
/// </summary>
public static class RunPlanner
{
    public static RunPlan Plan(IReadOnlyList<PlanTransport> selected, RunPlanSettings settings, Func<int> freePort, TaskLoggingHelper? log = null)
    {
        if (settings.ReferenceEvery < 0)
            throw new IntegrationException(ErrorCodes.InvalidParameter,
                $"ReferenceEvery must be 0 (the reference once a round) or more (was {settings.ReferenceEvery}).");
        // A transport capped below every record count asked for (CapRecordCounts: the small-requests transports) has none left to run.
        var transports = selected.Where(t => t.RecordCounts.Count > 0).ToList();
        var combinations = new List<(PlanTransport Transport, PlannedRun Run)>();
        foreach (var transport in transports)
            foreach (var run in RunMatrix.Plan(transport.RecordCounts, transport.Kind == RunKind.Peer || transport.OneClient ? [1] : settings.ClientCounts,
                         settings.BatchSize, settings.Repetitions, settings.WarmupRuns, log, settings.BatchSizes, settings.LatenciesMs,
                         transport.Kind == RunKind.Peer || transport.OneClient ? 0 : settings.RecordsPerClient))
                combinations.Add((transport, run));
        return settings.Order == RunOrder.Interleaved
            ? Interleaved(transports, combinations, settings, freePort)
            : ByTransport(transports, combinations, settings);
    }

    /// <summary>A group per transport, in the order given with the peer last; each transport's server on its configured port.</summary>
    private static RunPlan ByTransport(List<PlanTransport> transports, List<(PlanTransport Transport, PlannedRun Run)> combinations, RunPlanSettings settings)
    {
        var ordered = transports.Where(t => t.Kind != RunKind.Peer).Concat(transports.Where(t => t.Kind == RunKind.Peer)).ToList();
        var servers = new List<ServerStep>();
        var runs = new List<RunStep>();
        for (var group = 1; group <= ordered.Count; group++)
        {
            var transport = ordered[group - 1];
            if (transport.HasServer)
                servers.Add(new ServerStep(group, transport.ServerTarget, transport));
            var own = combinations.Where(c => c.Transport == transport).Select(c => c.Run).ToList();
            for (var i = 0; i < own.Count; i++)
                runs.Add(new RunStep(group, transport, own[i], own[i].Repetition, i + 1, own.Count, i == 0 ? group : 0));
        }
        return new RunPlan(RunOrder.ByTransport, settings.Seed, servers, runs, [], ordered.Count);
    }

    private static RunPlan Interleaved(List<PlanTransport> transports, List<(PlanTransport Transport, PlannedRun Run)> combinations, RunPlanSettings settings,
        Func<int> freePort)
    {
        var servers = AssignPorts(transports, freePort);
        var runs = new List<RunStep>();
        // Warm-up w of every transport before warm-up w+1 of any: a transport's first run compiles new code, and the JIT holds back
        // recompiling hot code while new code keeps coming, so the later warm-ups are the ones that see it settle.
        var warmups = combinations.Where(c => c.Run.Repetition == 0).OrderBy(c => c.Run.WarmupRun).ToList();
        foreach (var (transport, run) in warmups)
            runs.Add(new RunStep(1, transport, run, 0, runs.Count + 1, warmups.Count));
        var references = transports.Where(t => t.Kind == RunKind.Reference).ToList();
        var random = new Random(settings.Seed);
        var sinceReference = new Dictionary<(string Reference, int Records, int Clients, int BatchSize), int>();
        for (var round = 1; round <= settings.Repetitions; round++)
        {
            var inRound = combinations.Where(c => c.Run.Repetition == round).ToArray();
            random.Shuffle(inRound);
            var scheduled = WithReferenceBetween(inRound, references, sinceReference, settings.ReferenceEvery);
            for (var i = 0; i < scheduled.Count; i++)
                runs.Add(new RunStep(1, scheduled[i].Transport, scheduled[i].Run, round, i + 1, scheduled.Count));
        }
        var started = servers.Values.Select(s => s.Transport.Name).ToHashSet(StringComparer.Ordinal);
        var others = transports.Where(t => t.HasServer && !started.Contains(t.Name) && servers.ContainsKey(t.ServerTarget))
            .Select(t => new ServerStep(1, t.ServerTarget, t)).ToList();
        return new RunPlan(RunOrder.Interleaved, settings.Seed, [.. servers.Values], runs, others, transports.Count);
    }

    /// <summary>
    /// The reference a transport is measured against, as the report pairs them: the one that reads as its server does (ServerWork),
    /// else the first; none for a reference itself or the peer.
    /// </summary>
    private static PlanTransport? ReferenceOf(PlanTransport transport, IReadOnlyList<PlanTransport> references) =>
        transport.Kind is RunKind.Reference or RunKind.Peer ? null
        : references.FirstOrDefault(r => r.ServerWork == transport.ServerWork) ?? references.FirstOrDefault();

    /// <summary>
    /// A round's shuffled runs with an extra run of a reference after every <paramref name="referenceEvery"/> runs measured against it
    /// (at their record count and clients), counted across rounds; the round's own reference runs stay where the shuffle put them and
    /// restart the count (an extra run that would come right before one is left out).
    /// </summary>
    private static List<(PlanTransport Transport, PlannedRun Run)> WithReferenceBetween((PlanTransport Transport, PlannedRun Run)[] inRound,
        IReadOnlyList<PlanTransport> references, Dictionary<(string Reference, int Records, int Clients, int BatchSize), int> sinceReference, int referenceEvery)
    {
        var scheduled = new List<(PlanTransport Transport, PlannedRun Run)>();
        for (var i = 0; i < inRound.Length; i++)
        {
            var (transport, run) = inRound[i];
            scheduled.Add((transport, run));
            if (referenceEvery == 0)
                continue;
            if (transport.Kind == RunKind.Reference)
            {
                sinceReference[(transport.Name, run.Records, run.Clients, run.BatchSize)] = 0;
                continue;
            }
            // Only where the reference runs at this size, batch size and clients; the extra run is a copy of its own.
            var own = ReferenceOf(transport, references) is { } reference
                ? inRound.FirstOrDefault(c => c.Transport == reference && c.Run.Records == run.Records && c.Run.Clients == run.Clients && c.Run.BatchSize == run.BatchSize)
                : default;
            if (own.Transport is null)
                continue;
            var key = (own.Transport.Name, run.Records, run.Clients, run.BatchSize);
            sinceReference[key] = sinceReference.GetValueOrDefault(key) + 1;
            // Due, unless the round's own run of it comes next anyway.
            if (sinceReference[key] < referenceEvery || (i + 1 < inRound.Length && inRound[i + 1] == own))
                continue;
            scheduled.Add(own);
            sinceReference[key] = 0;
        }
        return scheduled;
    }

    /// <summary>
    /// Each server once (by its target), with the port it will keep: the configured one, unless a server already planned has it (the
    /// TCP generations all read Port), then a free one of the machine's.
    /// </summary>
    private static Dictionary<string, ServerStep> AssignPorts(IEnumerable<PlanTransport> transports, Func<int> freePort)
    {
        var servers = new Dictionary<string, ServerStep>(StringComparer.Ordinal);
        var taken = new HashSet<int>();
        foreach (var transport in transports.Where(t => t.HasServer && !servers.ContainsKey(t.ServerTarget)))
        {
            var port = transport.ServerPort;
            if (transport.PortProperty.Length == 0 || port == 0)
            {
                servers[transport.ServerTarget] = new ServerStep(1, transport.ServerTarget, transport);
                continue;
            }
            if (!taken.Add(port))
            {
                port = freePort();
                taken.Add(port);
            }
            servers[transport.ServerTarget] = new ServerStep(1, transport.ServerTarget, transport, port);
        }
        return servers;
    }
}
