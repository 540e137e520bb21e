using System.Globalization;
using System.Net;
using System.Net.Sockets;
using IntegrationTasks.Common;
using Microsoft.Build.Framework;
using TaskItem = Microsoft.Build.Utilities.TaskItem;

namespace IntegrationTasks.Results;

/// <summary>
/// RunAll's interleaved order: every transport's warm-ups first (in the order listed, the first warm-up of each, then the second), then round 1 — repetition 1 of every
/// transport, record count and client count, in an order shuffled for that round — then round 2, and so on. A slow stretch of the
/// machine then falls on every transport alike instead of on the one whose turn it was, and drops out of their ratios. The
/// shuffle's seed is an output, recorded with each run: the same seed gives the same order.
/// Each server is started once and kept for all rounds, so servers that share a port property (the TCP generations' Port) are
/// given free ports of their own.
/// </summary>
public sealed class PlanRounds : IntegrationTask
{
    /// <summary>RunAll's transports (their definitions' metadata: RecordCounts, ServerTarget, ServerPort, PortProperty; Peer and ClientTarget for the peer).</summary>
    [Required] public ITaskItem[] Transports { get; set; } = [];
    [Required] public int BatchSize { get; set; }
    [Required] public int Repetitions { get; set; }
    public string[] ClientCounts { get; set; } = ["1"];
    public bool Warmup { get; set; } = true;
    public int WarmupRuns { get; set; } = 1;

    /// <summary>
    /// Also run the reference (a transport whose metadata has Reference=true: PipelinedCopy, PipelinedCopyRange) after every this many
    /// runs that are measured against it, so that each run has a reference run close by in time to be paired with; 0: once a round.
    /// </summary>
    public int ReferenceEvery { get; set; }

    /// <summary>The shuffle's seed; empty: a new one, printed and recorded.</summary>
    public string Seed { get; set; } = "";

    /// <summary>The runs in the order to run them; each has AdditionalProperties for the MSBuild task.</summary>
    [Output] public ITaskItem[] Runs { get; private set; } = [];

    /// <summary>The servers to start before the rounds and stop after them (AdditionalProperties: a transport of theirs, its record counts and its port).</summary>
    [Output] public ITaskItem[] Servers { get; private set; } = [];

    /// <summary>The other transports of each server (metadata ServerTarget): told as failed, with the server's reason, if it does not start.</summary>
    [Output] public ITaskItem[] OtherServerUsers { get; private set; } = [];

    [Output] public int SeedUsed { get; private set; }

    protected override Task ExecuteAsync(CancellationToken cancellationToken)
    {
        SeedUsed = Seed.Length == 0 ? Random.Shared.Next(1, 1_000_000)
            : int.TryParse(Seed, NumberStyles.None, CultureInfo.InvariantCulture, out var seed) ? seed
            : throw new IntegrationException(ErrorCodes.InvalidParameter, $"ShuffleSeed must be a whole number (was '{Seed}').");
        if (ReferenceEvery < 0)
            throw new IntegrationException(ErrorCodes.InvalidParameter, $"ReferenceEvery must be 0 (the reference once a round) or more (was {ReferenceEvery}).");
        // A transport capped below every record count asked for (CapRecordCounts: the small-requests transports) has none left to run.
        var transports = Transports.Where(t => t.GetMetadata("RecordCounts").Length > 0).ToList();
        var ports = AssignPorts(transports);
        var clientCounts = Counts.Parse(ClientCounts, "Clients");
        var combinations = new List<(ITaskItem Transport, PlanRuns.PlannedRun Run)>();
        foreach (var transport in transports)
        {
            var oneClient = transport.GetMetadata("Peer") == "true" || transport.GetMetadata("OneClient") == "true";
            foreach (var run in PlanRuns.Plan(PlanRuns.ParseRecordCounts([transport.GetMetadata("RecordCounts")]), oneClient ? [1] : clientCounts,
                         BatchSize, Repetitions, PlanRuns.WarmupCount(Warmup, WarmupRuns), Log))
                combinations.Add((transport, run));
        }
        var ordered = new List<ITaskItem>();
        // Warm-up w of every transport before warm-up w+1 of any: a transport's first run compiles new code, and the JIT holds back
        // recompiling hot code while new code keeps coming, so the later warm-ups are the ones that see it settle.
        var warmups = combinations.Where(c => c.Run.Repetition == 0).OrderBy(c => c.Run.WarmupRun).ToList();
        foreach (var (transport, run) in warmups)
            ordered.Add(RunItem(transport, run, ports, round: 0, position: ordered.Count + 1, of: warmups.Count));
        var references = transports.Where(IsReference).ToList();
        var random = new Random(SeedUsed);
        var sinceReference = new Dictionary<(string Reference, int Records, int Clients), int>();
        for (var round = 1; round <= Repetitions; round++)
        {
            var inRound = combinations.Where(c => c.Run.Repetition == round).ToArray();
            random.Shuffle(inRound);
            var scheduled = WithReferenceBetween(inRound, references, sinceReference);
            for (var i = 0; i < scheduled.Count; i++)
                ordered.Add(RunItem(scheduled[i].Transport, scheduled[i].Run, ports, round, i + 1, scheduled.Count));
        }
        Runs = [.. ordered];
        var byName = transports.ToDictionary(t => t.ItemSpec, StringComparer.Ordinal);
        Servers = [.. ports.Select(server =>
        {
            var item = new TaskItem(server.Key);
            item.SetMetadata("ServerTarget", server.Key);
            item.SetMetadata("AdditionalProperties",
                $"Transport={server.Value.Transport};RecordCounts={byName[server.Value.Transport].GetMetadata("RecordCounts")}{server.Value.Override}");
            return item;
        })];
        OtherServerUsers = [.. transports.Where(t => ports.TryGetValue(t.GetMetadata("ServerTarget"), out var server) && server.Transport != t.ItemSpec
                                                     && t.GetMetadata("Peer") != "true")
            .Select(t =>
            {
                var item = new TaskItem(t.ItemSpec);
                item.SetMetadata("ServerTarget", t.GetMetadata("ServerTarget"));
                item.SetMetadata("AdditionalProperties", $"Transport={t.ItemSpec};RecordCounts={t.GetMetadata("RecordCounts")}");
                return item;
            })];
        return Task.CompletedTask;
    }

    private static bool IsReference(ITaskItem transport) => transport.GetMetadata("Reference") == "true";

    /// <summary>
    /// The reference a transport is measured against, as the report pairs them: the one that reads as its server does (ServerWork),
    /// else the first; none for a reference itself or the peer.
    /// </summary>
    private static ITaskItem? ReferenceOf(ITaskItem transport, IReadOnlyList<ITaskItem> references) =>
        IsReference(transport) || transport.GetMetadata("Peer") == "true" ? null
        : references.FirstOrDefault(r => r.GetMetadata("ServerWork") == transport.GetMetadata("ServerWork")) ?? references.FirstOrDefault();

    /// <summary>
    /// A round's shuffled runs with an extra run of a reference after every <see cref="ReferenceEvery"/> runs measured against it (at
    /// their record count and clients), counted across rounds; the round's own reference runs stay where the shuffle put them and
    /// restart the count (an extra run that would come right before one is left out).
    /// </summary>
    private List<(ITaskItem Transport, PlanRuns.PlannedRun Run)> WithReferenceBetween((ITaskItem Transport, PlanRuns.PlannedRun Run)[] inRound,
        IReadOnlyList<ITaskItem> references, Dictionary<(string Reference, int Records, int Clients), int> sinceReference)
    {
        var scheduled = new List<(ITaskItem Transport, PlanRuns.PlannedRun Run)>();
        for (var i = 0; i < inRound.Length; i++)
        {
            var (transport, run) = inRound[i];
            scheduled.Add((transport, run));
            if (ReferenceEvery == 0)
                continue;
            if (IsReference(transport))
            {
                sinceReference[(transport.ItemSpec, run.Records, run.Clients)] = 0;
                continue;
            }
            // Only where the reference runs at this size and clients (it runs one client only); the extra run is a copy of its own.
            var own = ReferenceOf(transport, references) is { } reference
                ? inRound.FirstOrDefault(c => c.Transport == reference && c.Run.Records == run.Records && c.Run.Clients == run.Clients) : default;
            if (own.Transport is null)
                continue;
            var key = (own.Transport.ItemSpec, run.Records, run.Clients);
            sinceReference[key] = sinceReference.GetValueOrDefault(key) + 1;
            // Due, unless the round's own run of it comes next anyway.
            if (sinceReference[key] < ReferenceEvery || (i + 1 < inRound.Length && inRound[i + 1] == own))
                continue;
            scheduled.Add(own);
            sinceReference[key] = 0;
        }
        return scheduled;
    }

    private static TaskItem RunItem(ITaskItem transport, PlanRuns.PlannedRun run, Dictionary<string, (string Transport, string Override)> ports, int round, int position, int of)
    {
        var item = new TaskItem($"{transport.ItemSpec}/{run.Records}/{run.Clients}/{run.Repetition}");
        var properties = new List<string> { $"Transport={transport.ItemSpec}" };
        foreach (var (name, value) in run.Metadata())
            properties.Add($"{name}={value}");
        properties.Add($"Round={round.ToString(CultureInfo.InvariantCulture)}");
        properties.Add($"RoundPosition={position.ToString(CultureInfo.InvariantCulture)} of {of.ToString(CultureInfo.InvariantCulture)}");
        if (transport.GetMetadata("Peer") == "true") // the peer is no definition: its client target, no server, one client
            properties.Add($"ClientTarget={transport.GetMetadata("ClientTarget")};ServerTarget=;ServerPort=0;TransportOneClient=true");
        var server = transport.GetMetadata("ServerTarget");
        item.SetMetadata("AdditionalProperties", string.Join(";", properties) + (ports.TryGetValue(server, out var port) ? port.Override : ""));
        item.SetMetadata("Transport", transport.ItemSpec);
        item.SetMetadata("ServerTarget", transport.GetMetadata("Peer") == "true" ? "" : server);
        return item;
    }

    /// <summary>
    /// Each server once (by its target), with the port it will keep: the configured one, unless a server already started for the rounds
    /// has it (the TCP generations all read Port), then a free one of the machine's.
    /// </summary>
    private static Dictionary<string, (string Transport, string Override)> AssignPorts(IEnumerable<ITaskItem> transports)
    {
        var servers = new Dictionary<string, (string Transport, string Override)>(StringComparer.Ordinal);
        var taken = new HashSet<int>();
        foreach (var transport in transports)
        {
            var server = transport.GetMetadata("ServerTarget");
            if (server.Length == 0 || transport.GetMetadata("Peer") == "true" || servers.ContainsKey(server))
                continue;
            var property = transport.GetMetadata("PortProperty");
            if (property.Length == 0 || !int.TryParse(transport.GetMetadata("ServerPort"), NumberStyles.None, CultureInfo.InvariantCulture, out var port) || port == 0)
            {
                servers[server] = (transport.ItemSpec, "");
                continue;
            }
            if (!taken.Add(port))
            {
                port = FreePort();
                taken.Add(port);
            }
            servers[server] = (transport.ItemSpec, $";{property}={port.ToString(CultureInfo.InvariantCulture)}");
        }
        return servers;
    }

    private static int FreePort()
    {
        using var listener = new TcpListener(IPAddress.Loopback, 0);
        listener.Start();
        return ((IPEndPoint)listener.LocalEndpoint).Port;
    }
}
