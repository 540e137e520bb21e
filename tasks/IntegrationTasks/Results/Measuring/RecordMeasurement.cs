using IntegrationTasks.Transfer;
using IntegrationTasks.Hosting;

namespace IntegrationTasks.Results;

/// <summary>
/// Appends one verified repetition to the results log: the client's figures (its ResultFile), what verification found
/// (<see cref="RunVerification"/>), the repetition number, and the server's side since the last repetition. The run's files are
/// read here and removed: one way, client → verification → results, none rewritten.
/// </summary>
public sealed class RecordMeasurement : IntegrationTask
{
    [Required] public string ResultsFile { get; set; } = "";

    /// <summary>What the client task wrote (its ResultFile); consumed here.</summary>
    [Required] public string RunFile { get; set; } = "";

    /// <summary>The name to report the run under (the RunAll transport name).</summary>
    [Required] public string Transport { get; set; } = "";

    /// <summary>What the run measures (a <see cref="RunKind"/>: the plan's, else its definition's), recorded with it.</summary>
    public string Kind { get; set; } = "";

    /// <summary>How the server read its batches (PerRecord or Range), recorded with the run.</summary>
    public string ServerWork { get; set; } = nameof(Data.ServerWork.PerRecord);

    /// <summary>The client went through the delay relay (set by _PlannedRun when it put one in front of the server).</summary>
    public bool Relayed { get; set; }

    /// <summary>The network profile and round-trip override the relay was given (the round trip is recorded when <see cref="Relayed"/>).</summary>
    public string? Network { get; set; }
    public string? LatencyMs { get; set; }

    /// <summary>The build's Tls: the transports' traffic went over TLS (the plan runs none that cannot).</summary>
    public bool Tls { get; set; }

    /// <summary>One host or Two (simulated), and the two hosts' own CPUs when they have them (<c>HostCpus</c>).</summary>
    public string Hosts { get; set; } = RunKey.OneHost;
    public string HostCpus { get; set; } = "";

    public int Repetition { get; set; }
    public int TotalRepetitions { get; set; }

    /// <summary>The server's log: its coded warnings and errors of this repetition are counted by code (<see cref="ServerLogErrors"/>).</summary>
    public string? ServerLogFile { get; set; }

    /// <summary>Where the server writes its own counters (<see cref="ServerStatsWriter"/>), if it does.</summary>
    public string? ServerStatsFile { get; set; }

    /// <summary>The server's process, when there is one: its peak is read, then reset for the next repetition.</summary>
    public int ServerProcessId { get; set; }

    /// <summary>Where StartServer keeps the server's current process id: after a restart (KillServer) it is not <see cref="ServerProcessId"/> any more.</summary>
    public string? ServerPidFile { get; set; }

    /// <summary>The server's place on another machine (<see cref="Hosting.Remote.MachinePlace"/>'s file); empty: it runs here.</summary>
    public string ServerMachinePlace { get; set; } = "";

    /// <summary>What the relay wrote about its fault when it stopped (<see cref="RelayFaultReport"/>), when there was one.</summary>
    public string? FaultReportFile { get; set; }

    /// <summary>The server's name (its log's), under which the build's <see cref="RunState"/> keeps its previous reading.</summary>
    private string ServerName => string.IsNullOrEmpty(ServerLogFile) ? "" : Path.GetFileNameWithoutExtension(ServerLogFile);

    /// <summary>The results database the run is also appended to (<see cref="ResultsHistory"/>); no connection string: none.</summary>
    public string HistoryProvider { get; set; } = "Sqlite";
    public string HistoryConnString { get; set; } = "";

    /// <summary>The repository, for the commit the database keeps with the RunAll.</summary>
    public string? RepositoryRoot { get; set; }

    /// <summary>The order the repetitions ran in: the shuffle's seed when interleaved (PlanRunAll), none when by transport.</summary>
    public int RoundSeed { get; set; }

    /// <summary>
    /// The server's CPU since the previous repetition of the same server process: what a run records where its client could not read
    /// the server's CPU over the transfer itself (see <see cref="TransferClientTask.ServerProcessId"/>).
    /// </summary>
    private double? ServerCpuSinceLastRepetition(RunState state) =>
        ProcessMemory.CpuSecondsOfTree(ServerProcessId) is { } total ? state.ServerCpuSinceLastReading(ServerName, ServerProcessId, total) : null;

    /// <summary>
    /// The server's stats as written after the run: it writes them every 100 ms while it has news, so a run shorter than that can
    /// fall between two writes, and the reading would still be the previous run's (its totals then read 0). Only then is a
    /// reading written since this task began waited for, a few samples at most (a server that has stopped writes no other).
    /// </summary>
    private static async Task<ServerStatsSnapshot?> FreshServerStatsAsync(string path, ServerStatsSnapshot? previous, CancellationToken cancellationToken)
    {
        var asked = DateTime.UtcNow;
        var waited = System.Diagnostics.Stopwatch.StartNew();
        while (previous is not null && ServerStatsWriter.Read(path) == previous && File.GetLastWriteTimeUtc(path) < asked && waited.Elapsed < StatsFreshnessWait)
            await Task.Delay(20, cancellationToken).ConfigureAwait(false);
        return ServerStatsWriter.Read(path);
    }

    private static readonly TimeSpan StatsFreshnessWait = TimeSpan.FromMilliseconds(350);

    /// <summary>The server's own report since the previous repetition (the same server process only).</summary>
    private async Task<(long? Allocated, long? WorkItems, ServerStatsSnapshot? Now)> ServerReportAsync(RunState state, CancellationToken cancellationToken)
    {
        if (string.IsNullOrEmpty(ServerStatsFile)
            || await FreshServerStatsAsync(ServerStatsFile, state.LastServerStats(ServerName), cancellationToken).ConfigureAwait(false) is not { } now)
            return (null, null, null);
        var previous = state.SwapServerStats(ServerName, now);
        // The maxima (threads, queue, connections, requests waiting) are the server's since it started (a server cannot be asked to
        // reset them); the totals are differences from the previous repetition's reading of the same process.
        return previous is null || previous.ProcessId != now.ProcessId
            ? (null, null, now)
            : (now.AllocatedBytes - previous.AllocatedBytes, now.CompletedWorkItems - previous.CompletedWorkItems, now);
    }

    /// <summary>
    /// A server on another machine read there over the run's connection: its peak since the last reading and its CPU since the
    /// previous repetition's, as a server here is read; its counters are copied here, where <see cref="ServerReportAsync"/> reads them.
    /// </summary>
    private async Task<(long? Peak, double? Cpu)> ReadServerThereAsync(Hosting.Remote.MachinePlace place, RunState state, CancellationToken cancellationToken)
    {
        Hosting.Remote.RemoteServerReading reading;
        try
        {
            reading = await place.ReadServerAsync(ServerName, ServerStatsFile, afterRun: true, cancellationToken).ConfigureAwait(false);
        }
        catch (IntegrationException e)
        {
            // The run is verified and recorded; only its server's figures are missing, and the report shows them empty.
            Log.LogWarning(null, e.Code, null, null, 0, 0, 0, 0, "{0}: the server's figures of this run could not be read there: {1}", Transport, e.Message);
            return (null, null);
        }
        if (!string.IsNullOrEmpty(ServerStatsFile) && reading.StatsJson is { } stats)
        {
            Directory.CreateDirectory(Path.GetDirectoryName(Path.GetFullPath(ServerStatsFile))!);
            File.WriteAllText(ServerStatsFile, stats);
        }
        return (reading.PeakBytes, state.ServerCpuSinceLastReading(ServerName, reading.ProcessId, reading.CpuSeconds));
    }

    protected override async Task ExecuteAsync(CancellationToken cancellationToken)
    {
        var state = RunState.For(BuildEngine, ResultsFile);
        if (state.OtherProcess is { } owner)
            Log.LogWarning(null, ErrorCodes.InvalidParameter, null, null, 0, 0, 0, 0,
                "{0}: this run ran in MSBuild process {1}, not in {2}, which holds the build's other runs (a build given -m): its progress, StopAtPrecision's rounds and the server's first reading here see only this process's runs. Run RunAll without -m.",
                Transport, Environment.ProcessId, owner);
        var run = MeasurementLog.ReadSingle(RunFile);
        if (RunVerification.Read(RunFile) is { } verification)
            run = run with
            {
                RowsMatched = verification.RowsMatched, RowsDuplicated = verification.RowsDuplicated,
                // What the rows carried, as found.
                PayloadBytes = verification.PayloadBytesPerRow ?? run.PayloadBytes, PayloadKind = verification.PayloadKind ?? run.PayloadKind,
            };
        if (ServerProcessId > 0 && !string.IsNullOrEmpty(ServerPidFile) && File.Exists(ServerPidFile)
            && int.TryParse(File.ReadAllText(ServerPidFile).Trim(), System.Globalization.CultureInfo.InvariantCulture, out var current))
            ServerProcessId = current;
        long? serverPeak = null;
        double? serverCpu = null;
        var place = Hosting.Remote.MachinePlace.Read(ServerMachinePlace);
        if (ServerProcessId > 0)
        {
            serverPeak = ProcessMemory.PeakBytesOfTree(ServerProcessId);
            ProcessMemory.ResetPeakOfTree(ServerProcessId);
            serverCpu = ServerCpuSinceLastRepetition(state);
        }
        else if (place is not null && ServerName.Length > 0)
            (serverPeak, serverCpu) = await ReadServerThereAsync(place, state, cancellationToken).ConfigureAwait(false);
        var (serverAllocated, serverItems, server) = await ServerReportAsync(state, cancellationToken).ConfigureAwait(false);
        var fault = run.Fault is not null && Relayed && !string.IsNullOrEmpty(FaultReportFile) ? RelayFaultReport.Read(FaultReportFile) : null;
        var measurement = run with
        {
            Transport = Transport, Kind = Enum.TryParse<RunKind>(Kind, out var kind) ? kind : null,
            ServerWork = Data.ServerWorks.Parse(ServerWork).ToString(), ThroughRelay = Relayed ? true : null,
            Network = Relayed && !string.IsNullOrEmpty(Network) ? Network : null, Tls = Tls ? true : null,
            Hosts = Hosts.Length > 0 && Hosts != RunKey.OneHost ? Hosts : null,
            HostCpus = HostCpus.Length > 0 && Hosts.Length > 0 && Hosts != RunKey.OneHost ? HostCpus : null, // CPUs of their own are two hosts'

            LatencyMs = Relayed ? IntegrationTasks.Network.NetworkProfile.Parse(Network, LatencyMs, bandwidthMbit: null).LatencyMs : null,
            Repetition = Repetition, Warmup = Repetition == 0, RoundSeed = RoundSeed > 0 ? RoundSeed : null, ServerPeakBytes = serverPeak, ServerCpuSeconds = run.ServerCpuSeconds ?? serverCpu,
            ServerAllocatedBytes = serverAllocated, ServerThreadPoolCompletedItems = serverItems, ServerThreadPoolMaxThreads = server?.MaxThreads,
            ServerThreadPoolMaxQueue = server?.MaxQueue, ServerMaxConnections = server?.MaxConnections, ServerMaxRequestsWaiting = server?.MaxRequestsWaiting,
            ServerErrors = string.IsNullOrEmpty(ServerLogFile) || (ServerProcessId <= 0 && (place is null || ServerName.Length == 0)) ? null : ServerLogErrors.SinceLastReading(ServerLogFile, state.ServerLog(ServerName)),
            FaultInjected = fault?.Injected, FaultAfterBytes = fault?.FaultAfterBytes, FaultBytesFromServer = fault?.BytesFromServer,
            FaultInjectedAtSeconds = fault?.InjectedAtSeconds,
            Verified = true,
            Timestamp = DateTimeOffset.UtcNow,
        };
        MeasurementLog.Append(ResultsFile, measurement);
        state.Record(measurement);
        RunVerification.Delete(RunFile);
        try
        {
            await RunHistory.AppendAsync(state, HistoryProvider, HistoryConnString, () => (RepositoryRoot is null ? "unknown" : RunEnvironment.GitCommit(RepositoryRoot),
                Path.GetDirectoryName(Path.GetFullPath(ResultsFile))!, RunHistory.Settings((BuildEngine as IBuildEngine6)?.GetGlobalProperties() ?? new Dictionary<string, string>())),
                measurement, cancellationToken).ConfigureAwait(false);
        }
        catch (IntegrationException e)
        {
            // The run is recorded (runs.jsonl, the report): the database is a copy, and its failure does not undo a verified run.
            Log.LogWarning(null, e.Code, null, null, 0, 0, 0, 0, "{0}: the run is in {1}, not in the results database: {2}", Transport, ResultsFile, e.Message);
        }
        if (fault is { Injected: false })
            Log.LogWarning(null, ErrorCodes.FaultNotInjected, null, null, 0, 0, 0, 0,
                "{0}, {1}: the fault {2} was not injected: the server sent {3:N0} bytes, under FaultAfterBytes ({4:N0}). The run is recorded as not injected; lower FaultAfterBytes or raise the record count.",
                Transport, Repetition == 0 ? "warm-up run" : $"repetition {Repetition}", run.Fault, fault.BytesFromServer, fault.FaultAfterBytes);
        if (measurement.FailedWith is { } code)
        {
            Log.LogMessage(MessageImportance.High, "{0}, {1}: failed cleanly under the injected fault {2} with {3} after {4:F3} s, {5:N0} records committed in whole batches.",
                Transport, Repetition == 0 ? "warm-up run" : $"repetition {Repetition}", measurement.Fault, code, measurement.ElapsedSeconds, measurement.RecordsCommitted);
            return;
        }
        Log.LogMessage(MessageImportance.High, "{0} {1:N0} records, {2}{3}: {4:F3} s, {5:N0} records/s, verified.",
            Transport, measurement.Records, Repetition == 0 ? "warm-up run" : $"repetition {Repetition}", TotalRepetitions > 0 && Repetition > 0 ? $" of {TotalRepetitions}" : "",
            measurement.ElapsedSeconds, measurement.RecordsPerSecond);
    }
}
