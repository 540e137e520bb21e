using System.Globalization;
using IntegrationTasks.Hosting;
using TaskItem = Microsoft.Build.Utilities.TaskItem;

namespace IntegrationTasks.Planning;

/// <summary>
/// RunAll's plan (<see cref="RunPlanner"/>) handed to MSBuild as one item per step, in the order to take them: each with metadata
/// Group, Kind (Server, Run (with Records) or ServerUser: a transport told as failed when a server it shares does not start), ServerTarget, Transport,
/// StopOnFailure (by transport: a transport's first failed run ends its runs) and AdditionalProperties for the MSBuild task.
/// </summary>
public sealed class PlanRunAll : IntegrationTask
{
    /// <summary>The transports (their definitions' metadata, RecordCounts after CapRecordCounts; Peer and ClientTarget for the peer).</summary>
    [Required] public ITaskItem[] Transports { get; set; } = [];
    [Required] public int BatchSize { get; set; }
    [Required] public int Repetitions { get; set; }
    public string[] ClientCounts { get; set; } = ["1"];
    public bool Warmup { get; set; } = true;
    public int WarmupRuns { get; set; } = SettingDefaults.WarmupRuns;

    /// <summary>Interleaved or ByTransport; a relay (latency, network profile, fault) is one per run of a transport, so with one the runs stay by transport.</summary>
    public string RepetitionOrder { get; set; } = nameof(RunOrder.Interleaved);
    public bool UseRelay { get; set; }

    /// <summary>Also run the reference after every this many runs measured against it (interleaved); 0: once a round.</summary>
    public int ReferenceEvery { get; set; }

    /// <summary>The shuffle's seed; empty: a new one, printed and recorded.</summary>
    public string Seed { get; set; } = "";

    /// <summary>StopAtPrecision's target in percent, when set: it needs interleaved rounds.</summary>
    public string StopAtPrecision { get; set; } = "";

    /// <summary>Say the plan and each run's progress.</summary>
    public bool Progress { get; set; }

    /// <summary>The payload sizes, each a pass of the whole plan in turn ("0+1024+65536"; 0: the series' rows).</summary>
    public string PayloadSizes { get; set; } = "0";

    /// <summary>The most payload a batch holds: a batch holds fewer than BatchSize records where its payload would pass this.</summary>
    public long BatchBytes { get; set; } = SettingDefaults.BatchBytes;

    /// <summary>The most payload one run moves: a pass with a payload runs its record counts capped to this.</summary>
    public long MaxRunBytes { get; set; } = SettingDefaults.MaxRunBytes;

    /// <summary>FindBatchSize's axis: every run at each of these batch sizes ("10+100+1000"); empty: <see cref="BatchSize"/> alone.</summary>
    public string BatchSizes { get; set; } = "";

    /// <summary>LatencySweep's axis: every relayed run at each of these added round trips in ms ("0+5+20"); empty: the network as set.</summary>
    public string LatenciesMs { get; set; } = "";

    /// <summary>
    /// TLS's axis: "false", "true", or both ("false+true"), each a pass of the whole plan in turn; a TLS pass runs the transports that
    /// carry TLS and the references (their pairs), its servers started over TLS.
    /// </summary>
    public string Tls { get; set; } = "false";

    /// <summary>Load's: each client count runs at this many records a client (its record count); 0: every record count at every client count.</summary>
    public int RecordsPerClient { get; set; }

    [Output] public ITaskItem[] Steps { get; private set; } = [];

    /// <summary>The shuffle's seed when interleaved, recorded with each run; 0 by transport.</summary>
    [Output] public int SeedUsed { get; private set; }

    /// <summary>The most records a run of the first pass asks for, and its payload: ServiceTable must hold them before the first run.</summary>
    [Output] public int MaxRecords { get; private set; }
    [Output] public int FirstPayloadBytes { get; private set; }

    protected override Task ExecuteAsync(CancellationToken cancellationToken)
    {
        var order = RepetitionOrder switch
        {
            nameof(RunOrder.Interleaved) when !UseRelay => RunOrder.Interleaved,
            nameof(RunOrder.Interleaved) or nameof(RunOrder.ByTransport) => RunOrder.ByTransport,
            _ => throw new IntegrationException(ErrorCodes.InvalidParameter, $"RepetitionOrder must be Interleaved or ByTransport (was '{RepetitionOrder}')."),
        };
        if (StopAtPrecision.Length > 0 && order != RunOrder.Interleaved)
            throw new IntegrationException(ErrorCodes.InvalidParameter,
                $"StopAtPrecision needs interleaved rounds (RepetitionOrder=Interleaved, no relay: no latency, network profile or fault); was RepetitionOrder={RepetitionOrder}{(UseRelay ? " with a relay" : "")}.");
        var seed = order == RunOrder.ByTransport ? 0
            : Seed.Length == 0 ? Random.Shared.Next(1, 1_000_000)
            : int.TryParse(Seed, NumberStyles.None, CultureInfo.InvariantCulture, out var given) ? given
            : throw new IntegrationException(ErrorCodes.InvalidParameter, $"ShuffleSeed must be a whole number (was '{Seed}').");
        var passes = PayloadPass.Plan(PayloadSizes, BatchSize, BatchBytes, MaxRunBytes);
        if (StopAtPrecision.Length > 0 && passes.Count > 1)
            throw new IntegrationException(ErrorCodes.InvalidParameter,
                $"StopAtPrecision judges the rounds of one plan, and PayloadBytes={PayloadSizes} makes {passes.Count}: run one RunAll per payload size to stop each at a precision.");
        var transports = Transports.Select(PlanTransport.FromItem).ToList();
        // Without a payload (one pass of 0 bytes) the steps are the series' as before: no payload or batch size of their own.
        var payloads = passes.Count > 1 || passes[0].PayloadBytes > 0;
        var steps = new List<ITaskItem>();
        var groups = 0;
        RunPlan? first = null;
        var latencies = Latencies();
        if (latencies is not null && !UseRelay)
            throw new IntegrationException(ErrorCodes.InvalidParameter, "LatenciesMs needs the relay (UseRelay=true): it is what adds the round trip.");
        var tlsPasses = TlsSetting.Values(Tls);
        if (StopAtPrecision.Length > 0 && tlsPasses.Count > 1)
            throw new IntegrationException(ErrorCodes.InvalidParameter,
                $"StopAtPrecision judges the rounds of one plan, and Tls={Tls} makes {tlsPasses.Count}: run one RunAll each.");
        foreach (var (tls, pass) in tlsPasses.SelectMany(tls => passes.Select(pass => (tls, pass))))
        {
            var settings = new RunPlanSettings(Counts.Parse(ClientCounts, "Clients"), pass.BatchSize, Repetitions, RunMatrix.WarmupCount(Warmup, WarmupRuns),
                order, seed, ReferenceEvery, BatchSizesAt(pass), latencies, RecordsPerClient);
            var passTransports = transports.Where(t => !tls || t.RunsOverTls).Select(t => t with { RecordCounts = pass.RecordCountsFor(t.RecordCounts) }).ToList();
            if (tlsPasses.Count > 1 && !passTransports.Any(t => t.Kind == RunKind.Transport))
                continue; // a TLS pass of references alone would measure nothing against the plaintext one
            var plan = RunPlanner.Plan(passTransports, settings, Ports.Free, Log);
            var tlsProperty = tlsPasses.Count > 1 ? [$"Tls={(tls ? "true" : "false")}"] : Array.Empty<string>();
            steps.AddRange(ToItems(plan, Progress, payloads ? pass : null, groups, UseRelay, tlsProperty));
            groups += plan.Runs.Select(r => r.Group).Concat(plan.Servers.Select(s => s.Group)).DefaultIfEmpty(0).Max();
            if (first is null)
            {
                first = plan;
                MaxRecords = plan.Runs.Count == 0 ? 0 : plan.Runs.Max(r => r.Run.Records);
                FirstPayloadBytes = pass.PayloadBytes;
            }
            if (Progress && tlsPasses.Count > 1)
                Log.LogMessage(MessageImportance.High, "RunAll's {0} pass: {1}.", tls ? "TLS" : "plaintext",
                    string.Join(", ", passTransports.Select(t => t.Name)));
            if (Progress && payloads)
                Log.LogMessage(MessageImportance.High, "{0}", string.Create(CultureInfo.InvariantCulture,
                    $"RunAll at {pass}: batches of {pass.BatchSize:N0} (BatchSize {BatchSize:N0}, at most {BatchBytes:N0} bytes of payload a batch: BatchBytes), record counts {string.Join(" + ", plan.Runs.Select(r => r.Run.Records).Distinct().Order().Select(r => r.ToString("N0", CultureInfo.InvariantCulture)))} (at most {MaxRunBytes:N0} bytes of payload a run: MaxRunBytes)."));
        }
        SeedUsed = first!.Seed;
        Steps = [.. steps];
        if (Progress)
            SayPlan(first);
        return Task.CompletedTask;
    }

    /// <summary>
    /// The batch-size axis at a pass's payload: the sizes whose batches stay within BatchBytes (the larger ones would all run at that
    /// bound, the same batch size under several names, so they are left out and said); the bound alone where none does. Null: no axis.
    /// </summary>
    private List<int>? BatchSizesAt(PayloadPass pass)
    {
        if (BatchSizes.Trim().Length == 0)
            return null;
        var asked = Counts.Parse([BatchSizes.Replace(';', '+')], "BatchSizes").Distinct().ToList();
        var within = asked.Where(size => Transfer.BatchBytesCheck.EffectiveBatchSize(size, pass.PayloadBytes, BatchBytes) == size).ToList();
        if (within.Count == asked.Count)
            return asked;
        var most = Transfer.BatchBytesCheck.EffectiveBatchSize(asked.Max(), pass.PayloadBytes, BatchBytes);
        Log.LogMessage(MessageImportance.High, "{0}", string.Create(CultureInfo.InvariantCulture,
            $"Batch sizes {string.Join(", ", asked.Except(within))} left out: at {pass.PayloadBytes:N0} bytes of payload a row, a batch holds at most {most:N0} records (BatchBytes {BatchBytes:N0}; -p:BatchBytes= raises it)."));
        return within.Count > 0 ? within : [most];
    }

    /// <summary>The round trips of the latency axis, in ms (0 or more); null: no axis.</summary>
    private List<double>? Latencies() =>
        LatenciesMs.Trim().Length == 0 ? null
        : [.. LatenciesMs.Split('+', ';').Select(t => t.Trim()).Where(t => t.Length > 0)
            .Select(text => double.TryParse(text, NumberStyles.Float, CultureInfo.InvariantCulture, out var ms) && ms >= 0 && double.IsFinite(ms) ? ms
                : throw new IntegrationException(ErrorCodes.InvalidParameter, $"LatenciesMs holds '{text}', which is not a round trip in ms (0 or more)."))
            .Distinct()];

    private void SayPlan(RunPlan plan)
    {
        if (RepetitionOrder == nameof(RunOrder.Interleaved) && UseRelay)
            Log.LogMessage(MessageImportance.High,
                "RunAll: each transport's repetitions run together (ByTransport): with a relay (latency, network profile or fault) each run has its own.");
        if (plan.Order != RunOrder.Interleaved)
            return;
        Log.LogMessage(MessageImportance.High, "{0}", string.Create(CultureInfo.InvariantCulture,
            $"RunAll: repetitions interleaved — round r of every transport before round r+1, each round's order shuffled with seed {plan.Seed} (-p:ShuffleSeed={plan.Seed} repeats it; -p:RepetitionOrder=ByTransport runs each transport's repetitions together)."));
        var reference = plan.Runs.Select(r => r.Transport).FirstOrDefault(t => t.Kind == RunKind.Reference);
        if (ReferenceEvery != 0 && reference is not null)
            Log.LogMessage(MessageImportance.High, "{0}", string.Create(CultureInfo.InvariantCulture,
                $"RunAll: the reference ({reference.Name}) also runs after every {ReferenceEvery} runs measured against it (ReferenceEvery), so that each run is paired with a reference run close by in time."));
    }

    /// <summary>The plan's steps as items: each group's servers, then the users of a server started for another transport, then its runs.</summary>
    /// <param name="pass">With a payload pass: its payload and batch size go with every step (the group's data and each run's).</param>
    /// <param name="groupOffset">The groups of the passes before: this plan's groups follow theirs.</param>
    /// <param name="useRelay">Runs go through a relay (of the transports with a port to put it in front of).</param>
    /// <param name="passProperties">What every step of this pass is run with (Tls=… on a TLS axis).</param>
    internal static IEnumerable<ITaskItem> ToItems(RunPlan plan, bool progress, PayloadPass? pass = null, int groupOffset = 0, bool useRelay = false,
        IReadOnlyList<string>? passProperties = null)
    {
        var stopOnFailure = plan.Order == RunOrder.ByTransport ? "true" : "false";
        var ports = plan.Servers.Where(s => s.Port != 0 && s.Transport.PortProperty.Length > 0)
            .ToDictionary(s => s.ServerTarget, s => $"{s.Transport.PortProperty}={s.Port.ToString(CultureInfo.InvariantCulture)}", StringComparer.Ordinal);
        IEnumerable<string> PortOf(PlanTransport transport) =>
            transport.HasServer && ports.TryGetValue(transport.ServerTarget, out var port) ? [port] : [];
        var groupRecords = plan.Runs.GroupBy(r => r.Group).ToDictionary(g => g.Key, g => g.Max(r => r.Run.Records));
        TaskItem Step(string spec, string kind, int group, PlanTransport transport, IEnumerable<string> properties)
        {
            var item = new TaskItem(spec);
            item.SetMetadata("Kind", kind);
            item.SetMetadata("Group", (groupOffset + group).ToString(CultureInfo.InvariantCulture));
            item.SetMetadata("PayloadBytes", (pass?.PayloadBytes ?? 0).ToString(CultureInfo.InvariantCulture));
            item.SetMetadata("GroupRecords", groupRecords.GetValueOrDefault(group).ToString(CultureInfo.InvariantCulture));
            item.SetMetadata("Transport", transport.Name);
            item.SetMetadata("ServerTarget", transport.HasServer ? transport.ServerTarget : "");
            item.SetMetadata("StopOnFailure", stopOnFailure);
            var payload = pass is null ? [] : new[] { $"PayloadBytes={pass.PayloadBytes.ToString(CultureInfo.InvariantCulture)}" };
            item.SetMetadata("AdditionalProperties", string.Join(";",
                new[] { $"Transport={transport.Name}", $"RecordCounts={string.Join('+', transport.RecordCounts)}" }.Concat(payload).Concat(passProperties ?? [])
                    .Concat(properties).Concat(PortOf(transport))));
            return item;
        }
        foreach (var group in plan.Runs.Select(r => r.Group).Concat(plan.Servers.Select(s => s.Group)).Distinct().Order())
        {
            foreach (var server in plan.Servers.Where(s => s.Group == group))
                yield return Step(server.ServerTarget, "Server", group, server.Transport, []);
            foreach (var user in plan.OtherServerUsers.Where(s => s.Group == group))
                yield return Step($"{user.Transport.Name} on {user.ServerTarget}", "ServerUser", group, user.Transport, []);
            foreach (var run in plan.Runs.Where(r => r.Group == group))
            {
                var item = Step($"{run.Transport.Name}/{run.Run.Records}/{run.Run.Clients}/{run.Round}/{run.Position}", "Run", group, run.Transport,
                    RunProperties(plan, run, progress, useRelay));
                item.SetMetadata("Records", run.Run.Records.ToString(CultureInfo.InvariantCulture));
                yield return item;
            }
        }
    }

    private static IEnumerable<string> RunProperties(RunPlan plan, RunStep step, bool progress, bool useRelay)
    {
        static string Text(int value) => value.ToString(CultureInfo.InvariantCulture);
        var run = step.Run;
        // A run's client runs in the run's own project instance, where these must hold whatever the command line says: every run is
        // verified, and a fault is injected only through a relay (a relayed run's instance is given the fault, _PlannedRun).
        yield return "Verify=true";
        if (!useRelay || step.Transport.PortProperty.Length == 0)
            yield return "Fault=None";
        yield return $"Records={Text(run.Records)}";
        yield return $"BatchSize={Text(run.BatchSize)}";
        yield return $"TotalBatches={Text(run.TotalBatches)}";
        if (run.LatencyMs is { } latency)
            yield return string.Create(CultureInfo.InvariantCulture, $"Network=Custom;LatencyMs={latency:R}");
        yield return $"Clients={Text(run.Clients)}";
        yield return $"Repetition={Text(run.Repetition)}";
        yield return $"WarmupRun={Text(run.WarmupRun)}";
        yield return $"RunKind={step.Transport.Kind}";
        yield return $"Round={Text(step.Round)}";
        yield return $"RoundPosition={Text(step.Position)}";
        yield return $"RunsInRound={Text(step.RunsInRound)}";
        // Interleaved: a line before each run; by transport: one before each transport's first run.
        var line = !progress ? "" : plan.Order == RunOrder.Interleaved ? "Run" : step.TransportOrdinal > 0 ? "Transport" : "";
        yield return $"ProgressLine={line}";
        if (line == "Transport")
            yield return $"TransportOrdinal={Text(step.TransportOrdinal)};TransportsInPlan={Text(plan.Transports)}";
        if (step.Transport.Kind == RunKind.Peer) // the peer is no definition: its client target, no server, one client
            yield return $"ClientTarget={step.Transport.ClientTarget};ServerTarget=;ServerPort=0;TransportOneClient=true";
    }
}
