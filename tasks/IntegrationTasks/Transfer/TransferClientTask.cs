using System.Diagnostics;
using IntegrationTasks.Data;
using IntegrationTasks.Hosting;

namespace IntegrationTasks.Transfer;

/// <summary>
/// What every client task shares: the series' parameters, the client database, honest timing (from
/// before connecting until the last batch is committed), a timeout, and the [Output] figures.
/// A transport only supplies <see cref="TransferAsync"/>.
/// </summary>
public abstract class TransferClientTask : IntegrationTask
{
    public string ClientProvider { get; set; } = "Sqlite";

    [Required]
    public string ClientConnString { get; set; } = "";

    [Required]
    public int TotalBatches { get; set; }

    [Required]
    public int BatchSize { get; set; }

    /// <summary>The whole transfer must finish within this many seconds.</summary>
    public int TimeoutSeconds { get; set; } = SettingDefaults.TimeoutSeconds;

    /// <summary>When set, the run's figures are also written here (JSON), for RecordMeasurement after verification.</summary>
    public string? ResultFile { get; set; }

    /// <summary>Reconnections a resuming transport makes in all before it gives up (with backoff: 0.2 s, doubling, at most 5 s between).</summary>
    public int MaxReconnects { get; set; } = SettingDefaults.MaxReconnects;

    /// <summary>How many times the connection broke and was resumed.</summary>
    [Output] public int Reconnects { get; private set; }

    /// <summary>From each break to the first commit after it, summed.</summary>
    [Output] public double RecoverySeconds { get; private set; }

    /// <summary>
    /// The fault injected into this run (None, Reset, Silence, KillServer). Under a fault, a transfer that fails with a break's code
    /// (IT3006, IT3003, timeout) is an outcome to record, not a build error: it is logged as a warning and written to ResultFile,
    /// and VerifyTransfer then checks that ClientTable holds whole batches only.
    /// </summary>
    public string Fault { get; set; } = "None";

    /// <summary>
    /// Clients started at once by this run, each with its own connection, its own database connection and its own contiguous share of
    /// the batches (as wrk and hey run many connections in one process); 1 is the series' single client.
    /// </summary>
    public int Clients { get; set; } = 1;

    /// <summary>Transports whose transfer keeps no state on the task but its resume loop may run as several clients at once.</summary>
    protected virtual bool ServesManyClients => false;

    /// <summary>
    /// Open loop: each client sends this many batches per second on a fixed schedule, and a batch's latency counts from the time it was
    /// meant to go (coordinated omission corrected, as wrk2 does); 0, the default, is the closed loop (each batch as soon as it may).
    /// </summary>
    public double Rate { get; set; }

    /// <summary>
    /// Batches asked for and not yet imported, at most, per client (a pipelining transport's window; a lock-step one has one in
    /// flight whatever this says). Declared and checked here once for every transport.
    /// </summary>
    public int MaxInFlight { get; set; } = SettingDefaults.MaxInFlight;

    /// <summary>
    /// When several client machines load one server: the UTC time (ISO 8601, "yyyy-MM-ddTHH:mm:ssZ") this run starts at, so that
    /// machines started with the same StartAt run at once (their clocks set by NTP); the wait is at most an hour. Recorded with the run.
    /// </summary>
    public string? StartAt { get; set; }

    /// <summary>This machine's name among several client machines (recorded with the run; -t:Report merges their runs of the same StartAt).</summary>
    public string? ClientMachine { get; set; }

    /// <summary>
    /// The server's process, where the orchestrator started one (0: none, or not known): its CPU is read when the timed transfer starts
    /// and when it ends, so the run's server CPU is this run's only. Read between repetitions instead, it took in whatever the server
    /// did while it waited for its next run: in an interleaved RunAll a whole round of the other transports (often more than the
    /// run's own work).
    /// </summary>
    public int ServerProcessId { get; set; }

    /// <summary>The broker the transfer goes through, where the build started one (0: none): metered over the timed transfer (<see cref="ProcessMeter"/>).</summary>
    public int BrokerProcessId { get; set; }

    /// <summary>The payload each row carries (GenerateData's PayloadBytes and PayloadKind): what a batch's size in bytes is checked by.</summary>
    public int PayloadBytes { get; set; }
    public string PayloadKind { get; set; } = nameof(Data.PayloadKind.Bytes);

    /// <summary>The most payload one batch may hold (<see cref="BatchBytesCheck"/>).</summary>
    public long BatchBytes { get; set; } = SettingDefaults.BatchBytes;

    /// <summary>The largest message the transport carries and the MSBuild property that sets it; null where a batch is streamed, with no such limit.</summary>
    protected virtual (long Bytes, string Property)? MessageLimit => null;

    /// <summary>Transports whose sends wait for their turn on the schedule (<see cref="BatchLatency.SendTurnAsync"/>).</summary>
    protected virtual bool SendsOnSchedule => false;

    /// <summary>Which of the run's clients this is (0 for the first or only one): for what each client must have of its own (a reply queue).</summary>
    protected int ClientIndex { get; private set; }

    private ResumingTransfer? _resumption;

    /// <summary>The other clients of a many-client run (copies of this task, each with its own resume loop).</summary>
    private List<TransferClientTask> _otherClients = [];

    private IEnumerable<ResumingTransfer> Resumptions =>
        new[] { _resumption }.Concat(_otherClients.Select(c => c._resumption)).OfType<ResumingTransfer>();

    /// <summary>The resume loop for this run (<see cref="ResumingTransfer"/>); a transport that does not resume passes false and fails at the first break.</summary>
    protected ResumingTransfer Resumption(BatchPlan plan, bool resumes) =>
        _resumption = new ResumingTransfer(plan, EventLog) { Resumes = resumes, MaxReconnects = MaxReconnects, Rate = Rate };

    /// <summary>The client's database, for transports that look at it before transferring (resuming ones).</summary>
    protected Database? ClientDatabase { get; private set; }

    /// <summary>A client run longer than this prints its progress this often (0: never).</summary>
    public int ProgressSeconds { get; set; } = 5;

    [Output] public double ElapsedSeconds { get; private set; }
    [Output] public double FirstCommitSeconds { get; private set; }
    [Output] public long Records { get; private set; }
    [Output] public long BytesSent { get; private set; }
    [Output] public long BytesReceived { get; private set; }
    [Output] public long PeakWorkingSetBytes { get; private set; }

    protected abstract string TransportName { get; }

    private bool FaultInjected => !string.IsNullOrEmpty(Fault) && !string.Equals(Fault, "None", StringComparison.OrdinalIgnoreCase);

    /// <summary>Transports that may deliver a batch twice (a redelivered message) import idempotently.</summary>
    protected virtual bool IdempotentImport => false;

    protected abstract Task<TransferResult> TransferAsync(BatchPlan plan, BatchImporter importer, CancellationToken cancellationToken);

    /// <summary>
    /// The batches of this client's share already whole in ClientTable, marked committed in <paramref name="resumption"/>: what a
    /// durable transport started again after a kill does not ask for again (a batch there in part is asked for whole; the
    /// idempotent import skips its rows already in).
    /// </summary>
    protected async Task SkipBatchesAlreadyImportedAsync(BatchPlan plan, ResumingTransfer resumption, CancellationToken cancellationToken)
    {
        var counts = new int[plan.TotalBatches];
        var firstId = plan.FirstId(0);
        await foreach (var row in RecordReader.ReadOrderedAsync(ClientDatabase!, RecordTable.Client, firstId, firstId + plan.Records - 1, cancellationToken)
                           .ConfigureAwait(false))
            counts[plan.BatchOf(row.Id)]++;
        var complete = Enumerable.Range(0, plan.TotalBatches).Where(b => counts[b] == plan.BatchSize).ToList();
        if (complete.Count == 0)
            return;
        foreach (var batch in complete)
            resumption.Committed.Add(batch);
        Log.LogMessage(MessageImportance.High, "{0}: {1} of {2} batches are already in ClientTable; resuming with the rest.",
            TransportName, complete.Count, plan.TotalBatches);
    }

    /// <summary>
    /// <see cref="Clients"/> copies of this task's transfer at once, each on its share of the plan with an importer of its own: the
    /// run ends when all have, the first failure cancels the others. Their rows land in the one ClientTable, verified as a whole
    /// (the shares are disjoint, so every client's rows are checked row by row).
    /// </summary>
    private async Task<TransferResult> TransferAsManyClientsAsync(BatchPlan plan, BatchImporter importer, Database database, CancellationToken cancellationToken)
    {
        _otherClients = [.. Enumerable.Range(1, Clients - 1).Select(k =>
        {
            var other = (TransferClientTask)MemberwiseClone();
            other._otherClients = [];
            other.ClientIndex = k;
            return other;
        })];
        var clients = new[] { this }.Concat(_otherClients).ToList();
        // Each client's import is synchronous (SQLite) and holds a pool thread, waiting for the database's one writer too; met as
        // starvation, the pool added threads slowly and the clients' replies queued behind them, so a run's time depended on luck.
        using var importThreads = ThreadPoolReservation.Reserve(Clients);
        using var cancellation = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        var results = new TransferResult[Clients];
        await TaskGroup.WhenAllOrFirstFailure(cancellation, [.. clients.Select(async (client, k) =>
        {
            await Task.Yield(); // all start at once
            await using var own = await BatchImporter.OpenForClientAsync(database, importer, IdempotentImport, cancellation.Token).ConfigureAwait(false);
            results[k] = await client.TransferAsync(plan.Slice(k, Clients), own, cancellation.Token).ConfigureAwait(false);
        })]).ConfigureAwait(false);
        return new TransferResult(results.Sum(r => r.BytesSent), results.Sum(r => r.BytesReceived)) { BytesMeasured = results.All(r => r.BytesMeasured) };
    }

    private DateTimeOffset? ParseStartAt()
    {
        if (string.IsNullOrEmpty(StartAt))
            return null;
        if (!DateTimeOffset.TryParse(StartAt, System.Globalization.CultureInfo.InvariantCulture,
                System.Globalization.DateTimeStyles.AssumeUniversal | System.Globalization.DateTimeStyles.AdjustToUniversal, out var start))
            throw new IntegrationException(ErrorCodes.InvalidParameter, $"StartAt '{StartAt}' is not a time (ISO 8601 UTC, for example 2026-11-24T08:00:00Z).");
        if (start - DateTimeOffset.UtcNow > TimeSpan.FromHours(1))
            throw new IntegrationException(ErrorCodes.InvalidParameter, $"StartAt {start:O} is more than an hour away; start the client closer to it.");
        return start;
    }

    /// <summary>The server's CPU since the reading at the start; null where either reading failed (a server killed and started again has another process).</summary>
    private double? ServerCpuSince(double? atStart) =>
        atStart is { } start && ProcessMemory.CpuSecondsOfTree(ServerProcessId) is { } end && end >= start ? end - start : null;

    protected override async Task ExecuteAsync(CancellationToken cancellationToken)
    {
        var plan = BatchPlan.Create(TotalBatches, BatchSize);
        if (Clients < 1 || Clients > plan.TotalBatches)
            throw new IntegrationException(ErrorCodes.InvalidParameter,
                $"Clients must be between 1 and the number of batches ({plan.TotalBatches}): each client needs a batch of its own (was {Clients}).");
        if (Rate < 0 || double.IsNaN(Rate) || (Rate > 0 && !SendsOnSchedule))
            throw new IntegrationException(ErrorCodes.InvalidParameter, Rate > 0
                ? $"{TransportName} has no open loop so far (Rate={Rate.ToString(System.Globalization.CultureInfo.InvariantCulture)} asked); the TCP, gRPC, HTTP, RabbitMQ and asynchronous web-service clients have."
                : $"Rate must be 0 (closed loop) or a number of batches per second per client (was {Rate.ToString(System.Globalization.CultureInfo.InvariantCulture)}).");
        if (Clients > 1 && !ServesManyClients)
            throw new IntegrationException(ErrorCodes.InvalidParameter,
                $"{TransportName} runs as one client only (Clients={Clients} asked): the database's own tool runs once, not as a server's clients.");
        if (TimeoutSeconds < 1)
            throw new IntegrationException(ErrorCodes.InvalidParameter, $"TimeoutSeconds must be at least 1 (was {TimeoutSeconds}).");
        if (MaxInFlight < 1)
            throw new IntegrationException(ErrorCodes.InvalidParameter, $"MaxInFlight must be at least 1 (was {MaxInFlight}).");
        BatchBytesCheck.Check(TransportName, plan.BatchSize, PayloadShape.Of(PayloadBytes, PayloadKind), BatchBytes, MessageLimit);
        var startAt = ParseStartAt();
        var database = Database.Create(ClientProvider, ClientConnString);
        await database.EnsureSchemaAsync(cancellationToken).ConfigureAwait(false);
        ClientDatabase = database;

        using var timeout = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        timeout.CancelAfter(TimeSpan.FromSeconds(TimeoutSeconds));
        Log.LogMessage(RunDetail, "{0}: {1} batches of {2} records ({3:N0} records){4}.",
            TransportName, plan.TotalBatches, plan.BatchSize, plan.Records, Clients > 1 ? $", as {Clients} clients at once" : "");

        // A process that ran something before (the build's, or a warmed client's) keeps what that left in its heaps (the GC's, and
        // glibc's under SQLite): it is returned to the system here, before the clock starts, so that the run's peak memory and its
        // collections are its own.
        if (PayloadBytes > 0 || ClientProcessContext.Mode is ClientProcessMode.Warmed or ClientProcessMode.Transport)
        {
            GC.Collect(GC.MaxGeneration, GCCollectionMode.Aggressive, blocking: true, compacting: true);
            ProcessMemory.TrimNativeHeap();
        }
        if (startAt is { } start && start - DateTimeOffset.UtcNow is { TotalMilliseconds: > 0 } wait)
        {
            Log.LogMessage(RunDetail, "{0}: starting at {1:O} (StartAt), in {2:0.###} s.", TransportName, start, wait.TotalSeconds);
            await Task.Delay(wait, cancellationToken).ConfigureAwait(false);
        }
        ProcessMemory.ResetPeak();
        var residentAtStart = ProcessMemory.ResidentBytes();
        await using var importer = await BatchImporter.OpenAsync(database, timeout.Token, IdempotentImport).ConfigureAwait(false);
        await using var sampler = new RuntimeSampler(TimeSpan.FromMilliseconds(100));
        var serverCpuAtStart = ServerProcessId > 0 ? ProcessMemory.CpuSecondsOfTree(ServerProcessId) : null;
        var brokerMeter = ProcessMeter.Start(BrokerProcessId);
        var watch = Stopwatch.StartNew();
        importer.Clock = watch;
        var progress = new TransferProgress(TransportName, plan, () => importer.RecordsImported, EventLog, TimeSpan.FromSeconds(ProgressSeconds));
        TransferResult result;
        IntegrationException? failure = null;
        try
        {
            try
            {
                result = Clients == 1 ? await TransferAsync(plan, importer, timeout.Token).ConfigureAwait(false)
                    : await TransferAsManyClientsAsync(plan, importer, database, timeout.Token).ConfigureAwait(false);
            }
            catch (OperationCanceledException) when (timeout.IsCancellationRequested && !cancellationToken.IsCancellationRequested)
            {
                throw new IntegrationException(ErrorCodes.Timeout,
                    $"{TransportName} did not finish within {TimeoutSeconds} s ({importer.RecordsImported:N0} records imported); see TimeoutSeconds.");
            }
        }
        catch (IntegrationException e) when (FaultInjected && e.Code is ErrorCodes.ConnectionLost or ErrorCodes.ConnectionFailed or ErrorCodes.Timeout)
        {
            failure = e;
            result = TransferResult.BytesNotMeasured;
            Log.LogWarning(null, e.Code, null, null, 0, 0, 0, 0, "{0} (under the injected fault {1}: recorded as its outcome; ClientTable is checked for whole batches next)",
                e.Message, Fault);
        }
        finally
        {
            await progress.DisposeAsync().ConfigureAwait(false);
            Reconnects = Resumptions.Sum(r => r.Reconnects);
            RecoverySeconds = Resumptions.Sum(r => r.Committed.RecoveryTime.TotalSeconds);
        }
        watch.Stop();
        var serverCpu = ServerCpuSince(serverCpuAtStart);
        var broker = brokerMeter?.Stop();
        var costs = await sampler.StopAsync().ConfigureAwait(false);

        ElapsedSeconds = watch.Elapsed.TotalSeconds;
        FirstCommitSeconds = importer.FirstCommitAfter?.TotalSeconds ?? 0;
        Records = importer.RecordsImported;
        BytesSent = result.BytesSent;
        BytesReceived = result.BytesReceived;
        PeakWorkingSetBytes = ProcessMemory.PeakBytes() ?? 0;
        var latency = LatencySummary.Merge(Resumptions.Select(r => r.Committed.Latency.Summarize()));
        var replyLatency = LatencySummary.Merge(Resumptions.Select(r => r.Committed.Latency.SummarizeReplies()));
        if (!string.IsNullOrEmpty(ResultFile))
        {
            MeasurementLog.WriteSingle(ResultFile, new Measurement
            {
                Transport = TransportName, Provider = database.Provider.ToString(), Records = plan.Records, BatchSize = plan.BatchSize, // what was asked for (an idempotent import may have seen some twice)
                PayloadBytes = PayloadBytes > 0 ? PayloadBytes : null, PayloadKind = PayloadBytes > 0 ? PayloadShape.Of(PayloadBytes, PayloadKind).Kind.ToString() : null,
                ElapsedSeconds = ElapsedSeconds, FirstCommitSeconds = FirstCommitSeconds, BytesSent = BytesSent,
                BytesReceived = BytesReceived, BytesNotMeasured = result.BytesMeasured ? null : true, ClientPeakBytes = PeakWorkingSetBytes,
                ClientPeakGrowthBytes = residentAtStart is { } resident && PeakWorkingSetBytes > 0 ? Math.Max(0, PeakWorkingSetBytes - resident) : null,
                ClientProcessId = Environment.ProcessId, ClientProcess = ClientProcessContext.Mode.ToString(),
                ClientStartSeconds = ClientProcessContext.StartSeconds, ClientWarmupSeconds = ClientProcessContext.WarmupSeconds,
                ClientRunsBefore = ClientProcessContext.RunsBefore,
                ClientCpuUserSeconds = costs.UserCpuSeconds, ClientCpuSystemSeconds = costs.SystemCpuSeconds,
                ClientMaxThreads = costs.MaxProcessThreads > 0 ? costs.MaxProcessThreads : null,
                SetupSeconds = importer.SetupTime?.TotalSeconds ?? 0, ClientCpuSeconds = costs.CpuSeconds,
                ClientAllocatedBytes = costs.AllocatedBytes, ThreadPoolMaxThreads = costs.MaxThreads,
                ThreadPoolMaxQueue = costs.MaxQueue, ThreadPoolCompletedItems = costs.CompletedWorkItems,
                ClientJitMethods = costs.JitMethods, ClientJitSeconds = costs.JitSeconds, ClientGcPauseSeconds = costs.GcPauseSeconds,
                ClientGcCollections = costs.GcCollections, HostStealSeconds = costs.StealSeconds, ServerCpuSeconds = serverCpu,
                BrokerCpuSeconds = broker?.CpuSeconds, BrokerPeakBytes = broker?.PeakBytes, BrokerStorageWriteBytes = broker?.StorageWriteBytes,
                Fault = FaultInjected ? Fault : null, Reconnects = _resumption is null ? null : Reconnects,
                Clients = Clients, Rate = Rate > 0 ? Rate : null, ClientLockWaitSeconds = importer.WriteLockWait.TotalSeconds, StartAt = startAt, ClientMachine = string.IsNullOrEmpty(ClientMachine) ? null : ClientMachine,
                RecoverySeconds = Reconnects > 0 ? RecoverySeconds : null, FailedWith = failure?.Code,
                RecordsCommitted = failure is null ? null : (int)Records, BatchLatency = latency, ReplyLatency = replyLatency,
            });
        }
        if (failure is not null)
            return;
        Log.LogMessage(RunDetail,
            "{0}: total processing time {1:F3} s for {2:N0} records ({3:N0} records/s), {4}.",
            TransportName, ElapsedSeconds, Records, Records / Math.Max(ElapsedSeconds, 1e-9),
            result.BytesMeasured ? $"{BytesSent:N0} bytes sent, {BytesReceived:N0} received" : "bytes on the wire not measured");
        if (latency is not null)
            Log.LogMessage(RunDetail, "{0}: batch latency (request sent to committed) p50 {1:0.###} ms, p99 {2:0.###} ms, p99.9 {3:0.###} ms, max {4:0.###} ms over {5:N0} batches.",
                TransportName, latency.P50Ms, latency.P99Ms, latency.P999Ms, latency.MaxMs, latency.Batches);
        if (replyLatency is not null)
            Log.LogMessage(RunDetail, "{0}: reply latency (request sent to reply received) p50 {1:0.###} ms, p99 {2:0.###} ms, p99.9 {3:0.###} ms.",
                TransportName, replyLatency.P50Ms, replyLatency.P99Ms, replyLatency.P999Ms);
    }
}
