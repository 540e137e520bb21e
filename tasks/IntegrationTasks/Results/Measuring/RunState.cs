using IntegrationTasks.Hosting;
using IntegrationTasks.Transfer;

namespace IntegrationTasks.Results;

/// <summary>
/// What a build's runs hand to the runs after them, held in memory for the build instead of in files beside the results: the runs
/// recorded so far (progress, StopAtPrecision's judgement), the round StopAtPrecision stopped after, and each server's last reading
/// (its CPU, its own counters, how far its log was read), from which a run's share is the difference. One owner per results log,
/// registered with MSBuild for the build's lifetime, so every project instance of the build finds the same one (MSBuild runs a
/// RunAll's runs on the node that waits for them). A task without a build engine that keeps objects gets a state of its own.
/// </summary>
public sealed class RunState
{
    private static readonly Lock Registration = new();
    private readonly Lock _gate = new();
    private readonly List<Measurement> _runs;
    private readonly Dictionary<string, (int ProcessId, double CpuSeconds)> _serverCpu = new(StringComparer.Ordinal);
    private readonly Dictionary<string, ServerStatsSnapshot> _serverStats = new(StringComparer.Ordinal);
    private readonly Dictionary<string, LogPosition> _serverLogs = new(StringComparer.Ordinal);
    private int? _stoppedAfterRound;

    private RunState(IEnumerable<Measurement> runs, int? otherProcess = null)
    {
        _runs = [.. runs];
        OtherProcess = otherProcess;
    }

    /// <summary>
    /// The MSBuild process that made this results folder's state first, when that is another one still running: this state is then a
    /// second one, made on a second node (a build given -m), and what it holds is only what this node saw. Null in the usual case.
    /// </summary>
    public int? OtherProcess { get; }

    /// <summary>The build's state for <paramref name="resultsFile"/>: made at its first use, from the runs the log holds then (read once).</summary>
    public static RunState For(IBuildEngine? engine, string resultsFile)
    {
        RunState Load() => new(File.Exists(resultsFile) ? MeasurementLog.Read(resultsFile) : []);
        if (engine is not IBuildEngine4 registry)
            return Load();
        var key = (nameof(RunState), Path.GetFullPath(resultsFile));
        lock (Registration)
        {
            if (registry.GetRegisteredTaskObject(key, RegisteredTaskObjectLifetime.Build) is RunState state)
                return state;
            var loaded = Load();
            state = OwnerOf(resultsFile) is { } other ? new RunState(loaded.Runs, other) : loaded;
            registry.RegisterTaskObject(key, state, RegisteredTaskObjectLifetime.Build, allowEarlyCollection: false);
            return state;
        }
    }

    /// <summary>
    /// The process that owns this results folder's state in this build (its pid in state/owner.pid, which each RunAll clears with the
    /// folder), when that is another live process; otherwise this process takes it and null is returned.
    /// </summary>
    private static int? OwnerOf(string resultsFile)
    {
        var marker = Path.Combine(Path.GetDirectoryName(Path.GetFullPath(resultsFile))!, "state", "owner.pid");
        try
        {
            if (File.Exists(marker) && int.TryParse(File.ReadAllText(marker).Trim(), System.Globalization.NumberStyles.None,
                    System.Globalization.CultureInfo.InvariantCulture, out var owner) && owner != Environment.ProcessId && IsRunning(owner))
                return owner;
            Directory.CreateDirectory(Path.GetDirectoryName(marker)!);
            File.WriteAllText(marker, Environment.ProcessId.ToString(System.Globalization.CultureInfo.InvariantCulture));
        }
        catch (IOException)
        {
            // Without the marker the check is only skipped: the state itself is as good.
        }
        return null;
    }

    private static bool IsRunning(int processId)
    {
        try
        {
            using var process = System.Diagnostics.Process.GetProcessById(processId);
            return !process.HasExited;
        }
        catch (ArgumentException)
        {
            return false;
        }
    }

    /// <summary>What a results folder's dated copies in the history folder are named after: the folder's own name ("results", "load").</summary>
    public static string HistoryName(string resultsDirectory) => Path.GetFileName(Path.TrimEndingDirectorySeparator(Path.GetFullPath(resultsDirectory)));

    /// <summary>The runs recorded so far, in order.</summary>
    public IReadOnlyList<Measurement> Runs
    {
        get
        {
            lock (_gate)
                return [.. _runs];
        }
    }

    public void Record(Measurement run)
    {
        lock (_gate)
            _runs.Add(run);
    }

    private Task<long>? _beginning;
    private long? _historyId;

    /// <summary>This build's RunAll in the results database: begun by its first recorded run (<paramref name="begin"/>), the same id after.</summary>
    public Task<long> HistoryIdAsync(Func<Task<long>> begin)
    {
        lock (_gate)
            return _beginning is { IsFaulted: false, IsCanceled: false } begun ? begun : _beginning = KeepAsync(begin());
    }

    private async Task<long> KeepAsync(Task<long> beginning)
    {
        var id = await beginning.ConfigureAwait(false);
        lock (_gate)
            _historyId = id;
        return id;
    }

    /// <summary>The id, once a run began it; null when this build recorded nothing in the database.</summary>
    public long? HistoryId
    {
        get
        {
            lock (_gate)
                return _historyId;
        }
    }

    /// <summary>The round after which StopAtPrecision stopped the rounds; null while they go on.</summary>
    public int? StoppedAfterRound
    {
        get
        {
            lock (_gate)
                return _stoppedAfterRound;
        }
        set
        {
            lock (_gate)
                _stoppedAfterRound = value;
        }
    }

    /// <summary>The server's CPU since its previous reading, if that was of the same process; the reading is kept for the next.</summary>
    public double? ServerCpuSinceLastReading(string server, int processId, double cpuSeconds)
    {
        lock (_gate)
        {
            var previous = _serverCpu.TryGetValue(server, out var last) && last.ProcessId == processId ? last.CpuSeconds : (double?)null;
            _serverCpu[server] = (processId, cpuSeconds);
            return cpuSeconds - previous;
        }
    }

    /// <summary>The server's counters as last read (null before its first reading), without replacing them.</summary>
    public ServerStatsSnapshot? LastServerStats(string server)
    {
        lock (_gate)
            return _serverStats.GetValueOrDefault(server);
    }

    /// <summary>The server's previous counters (null at its first reading); <paramref name="now"/> is kept for the next.</summary>
    public ServerStatsSnapshot? SwapServerStats(string server, ServerStatsSnapshot now)
    {
        lock (_gate)
        {
            _serverStats.TryGetValue(server, out var previous);
            _serverStats[server] = now;
            return previous;
        }
    }

    /// <summary>Where the server's log was last read to (a new position at its first reading).</summary>
    public LogPosition ServerLog(string server)
    {
        lock (_gate)
        {
            if (!_serverLogs.TryGetValue(server, out var position))
                _serverLogs[server] = position = new LogPosition();
            return position;
        }
    }
}

/// <summary>How far a log was read: its path and the offset read to.</summary>
public sealed class LogPosition
{
    public string? Path { get; set; }
    public long Offset { get; set; }
}
