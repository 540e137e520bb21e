namespace IntegrationTasks.Transfer;

/// <summary>
/// Runs the transfer task a transport's definition names (its class: TcpClient2, SoapServer …) with the parameters every
/// such task shares, given once here, and the transport's own (<see cref="Parameters"/>, "Name=Value" each, from its family's
/// targets file): the one client target and the one server target use this instead of a copy of the task's XML per transport.
/// As in MSBuild's own task XML, an empty value leaves the parameter at its default, and a [Required] one left empty is an
/// error (IT1001); the task then runs as it would on its own — its log, its errors, its cancellation.
/// </summary>
public abstract class NamedTransferTask<TTask> : Microsoft.Build.Utilities.Task, ICancelableTask where TTask : IntegrationTask
{
    /// <summary>The task's class name (TcpClient2).</summary>
    [Required] public string TaskName { get; set; } = "";

    /// <summary>The transport's own parameters, "Name=Value" (the value may hold '=' but not ';').</summary>
    public string[] Parameters { get; set; } = [];

    private TTask? _task;
    private volatile bool _cancelled;

    /// <summary>The tasks this runs, by class name.</summary>
    private protected abstract TransferTaskCatalog<TTask> Catalog { get; }

    /// <summary>The shared parameters as this task was given them, each named as the <typeparamref name="TTask"/> property it is passed to.</summary>
    private protected abstract IEnumerable<(string Name, string Value)> SharedParameters();

    /// <summary>Given as a whole in place of the properties (a client process is handed them by the build): they then stand for <see cref="SharedParameters"/>.</summary>
    internal IReadOnlyDictionary<string, string>? GivenSharedParameters { get; init; }

    private IEnumerable<(string Name, string Value)> Shared() =>
        GivenSharedParameters is { } given ? given.Select(p => (p.Key, p.Value)) : SharedParameters();

    public override bool Execute()
    {
        try
        {
            _task = Create();
        }
        catch (IntegrationException e)
        {
            Log.LogError(null, e.Code, null, null, 0, 0, 0, 0, "{0}", e.Message);
            return false;
        }
        if (_cancelled)
            _task.Cancel();
        return _task.Execute();
    }

    public virtual void Cancel()
    {
        _cancelled = true;
        _task?.Cancel();
    }

    /// <summary>The named task with every parameter set, ready to execute.</summary>
    internal TTask Create()
    {
        var binding = Catalog.Named(TaskName);
        var task = binding.Create();
        task.BuildEngine = BuildEngine;
        task.HostObject = HostObject;
        var given = new HashSet<string>(StringComparer.Ordinal);
        // A shared parameter goes to every task that takes it (the in-process copies also read the server's database); a transport's own
        // parameter must be one its task takes.
        foreach (var (name, value, shared) in Shared().Select(p => (p.Name, p.Value, true))
                     .Concat(Parameters.Select(p => ParameterText.Split(TaskName, p)).Select(p => (p.Name, p.Value, false))))
        {
            if (value.Length == 0)
                continue; // as MSBuild does with an attribute that evaluates to nothing: the default stays
            if (shared && !binding.Parameters.ContainsKey(name))
                continue;
            Set(task, binding.Parameter(name), value);
            given.Add(name);
        }
        var missing = binding.Parameters.Values.Where(p => p.Required && !given.Contains(p.Name)).Select(p => p.Name).ToList();
        if (missing.Count > 0)
            throw new IntegrationException(ErrorCodes.InvalidParameter, $"{TaskName} needs {string.Join(", ", missing)}.");
        return task;
    }

    private void Set(TTask task, TransferParameter<TTask> parameter, string value)
    {
        try
        {
            parameter.Set(task, value);
        }
        catch (Exception e) when (e is FormatException or OverflowException or ArgumentException)
        {
            throw new IntegrationException(ErrorCodes.InvalidParameter, $"{TaskName}'s parameter {parameter.Name} cannot be '{value}': {e.Message}");
        }
    }
}

/// <summary>The client of a transport: the one client target runs every transport's client task through it, with these shared parameters.</summary>
public sealed class RunTransferClient : NamedTransferTask<TransferClientTask>
{
    private protected override TransferTaskCatalog<TransferClientTask> Catalog => TransferTasks.Clients;

    /// <summary>
    /// Where the client runs: Transport (a process for each transport, kept for its runs: the default), Fresh (a process of its own that runs nothing before), Warmed (a process of its own that first runs the
    /// same transport's warm-up of <see cref="ClientWarmupBatches"/> batches, untimed) or Build (inside the build's own process).
    /// </summary>
    public string ClientProcess { get; set; } = SettingDefaults.ClientProcess;

    /// <summary>The suite's host (its client mode runs the task in a process of its own); needed unless ClientProcess is Build.</summary>
    public string ClientHostAssembly { get; set; } = "";

    /// <summary>The batches a Warmed client process transfers before its measured run (then ClientTable is emptied).</summary>
    public int ClientWarmupBatches { get; set; } = SettingDefaults.ClientWarmupBatches;

    private readonly CancellationTokenSource _processCancellation = new();

    public override bool Execute()
    {
        if (!Enum.TryParse<ClientProcessMode>(ClientProcess, ignoreCase: true, out var mode) || !Enum.IsDefined(mode))
        {
            Log.LogError(null, ErrorCodes.InvalidParameter, null, null, 0, 0, 0, 0, "ClientProcess must be Fresh, Warmed, Transport or Build (was '{0}').", ClientProcess);
            return false;
        }
        if (mode == ClientProcessMode.Build)
            return base.Execute();
        if (ClientWarmupBatches < 1)
        {
            Log.LogError(null, ErrorCodes.InvalidParameter, null, null, 0, 0, 0, 0, "ClientWarmupBatches must be at least 1 (was {0}).", ClientWarmupBatches);
            return false;
        }
        var run = new ClientProcessRun(Log, BuildEngine, ClientHostAssembly);
        var request = new ClientRunRequest(TaskName, Parameters, SharedParameters().ToDictionary(p => p.Name, p => p.Value),
            (BuildEngine as IBuildEngine6)?.GetGlobalProperties().ToDictionary() ?? [], BuildEngine.ProjectFileOfTaskNode ?? "", mode, ClientWarmupBatches);
        return Task.Run(() => run.RunAsync(request, _processCancellation.Token)).GetAwaiter().GetResult();
    }

    public override void Cancel()
    {
        _processCancellation.Cancel();
        base.Cancel();
    }

    private protected override IEnumerable<(string Name, string Value)> SharedParameters() =>
    [
        (nameof(ClientProvider), ClientProvider), (nameof(ClientConnString), ClientConnString), (nameof(ServerProvider), ServerProvider),
        (nameof(ServerConnString), ServerConnString), (nameof(ServerWork), ServerWork), (nameof(TotalBatches), TotalBatches),
        (nameof(BatchSize), BatchSize), (nameof(TimeoutSeconds), TimeoutSeconds), (nameof(ResultFile), ResultFile), (nameof(Fault), Fault),
        (nameof(MaxReconnects), MaxReconnects), (nameof(Clients), Clients), (nameof(StartAt), StartAt), (nameof(ClientMachine), ClientMachine),
        (nameof(Rate), Rate), (nameof(MaxInFlight), MaxInFlight), (nameof(PayloadBytes), PayloadBytes), (nameof(PayloadKind), PayloadKind),
        (nameof(BatchBytes), BatchBytes), (nameof(ServerProcessId), ServerProcessId), (nameof(BrokerProcessId), BrokerProcessId),
    ];

    public string ClientProvider { get; set; } = "";
    public string ClientConnString { get; set; } = "";

    /// <summary>For the clients that read the server's database themselves (the in-process copies); the others have no such parameter.</summary>
    public string ServerProvider { get; set; } = "";
    public string ServerConnString { get; set; } = "";
    public string ServerWork { get; set; } = "";
    public string TotalBatches { get; set; } = "";
    public string BatchSize { get; set; } = "";
    public string TimeoutSeconds { get; set; } = "";
    public string ResultFile { get; set; } = "";
    public string Fault { get; set; } = "";
    public string MaxReconnects { get; set; } = "";
    public string Clients { get; set; } = "";
    public string StartAt { get; set; } = "";
    public string ClientMachine { get; set; } = "";
    public string Rate { get; set; } = "";
    public string MaxInFlight { get; set; } = "";
    public string PayloadBytes { get; set; } = "";
    public string PayloadKind { get; set; } = "";
    public string BatchBytes { get; set; } = "";

    /// <summary>The server the orchestrator started for this run, whose CPU the client reads over its timed transfer.</summary>
    public string ServerProcessId { get; set; } = "";

    /// <summary>The broker the build started for this run's transport, metered over the timed transfer.</summary>
    public string BrokerProcessId { get; set; } = "";
}

/// <summary>The server of a transport: the one server target runs every server task through it, with these shared parameters.</summary>
public sealed class RunTransferServer : NamedTransferTask<TransferServerTask>
{
    private protected override TransferTaskCatalog<TransferServerTask> Catalog => TransferTasks.Servers;

    private protected override IEnumerable<(string Name, string Value)> SharedParameters() =>
    [
        (nameof(ServerProvider), ServerProvider), (nameof(ServerConnString), ServerConnString), (nameof(ServerWork), ServerWork),
        (nameof(StopOnStdinClose), StopOnStdinClose), (nameof(ExitOnInterrupt), ExitOnInterrupt), (nameof(StatsFile), StatsFile),
    ];

    public string ServerProvider { get; set; } = "";
    public string ServerConnString { get; set; } = "";
    public string ServerWork { get; set; } = "";
    public string StopOnStdinClose { get; set; } = "";
    public string ExitOnInterrupt { get; set; } = "";
    public string StatsFile { get; set; } = "";
}
