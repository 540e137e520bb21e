namespace IntegrationTasks.Hosting;

/// <summary>
/// Starts a server target (`dotnet msbuild Project -t:Target`) as its own process and returns when
/// it is ready. The process is registered for the rest of the build: <see cref="StopServer"/> stops
/// it gracefully, and if the build fails or is cancelled first, MSBuild disposes it at build end.
/// </summary>
public sealed class StartServer : IntegrationTask
{
    [Required] public string Name { get; set; } = "";
    [Required] public string Project { get; set; } = "";
    [Required] public string Target { get; set; } = "";

    /// <summary>Global properties for the server's build: item spec = name, metadata Value = value (families may declare one twice; the first counts).</summary>
    public ITaskItem[] Properties { get; set; } = [];

    /// <summary>When set, checked free before starting, so a taken port fails at once and clearly.</summary>
    public int Port { get; set; }

    public string BindAddress { get; set; } = SettingDefaults.BindAddress;

    public int ReadyTimeoutSeconds { get; set; } = SettingDefaults.ServerReadyTimeoutSeconds;

    public string? LogFile { get; set; }

    /// <summary>Where the server's global properties are written for it, owner-only (never on its command line); its log's folder by default.</summary>
    public string? PropertiesFile { get; set; }

    /// <summary>A command the server runs through, words separated by spaces (<c>ip netns exec NAME</c> for the server side of two hosts); its port is then checked by the server itself.</summary>
    public string CommandPrefix { get; set; } = "";

    /// <summary>
    /// The place on another machine where the server runs (<see cref="Remote.MachinePlace"/>'s file, written by RunAll with
    /// ServerMachine); empty: here. There, its properties' paths are the run's folder there, and what it needs is sent first.
    /// </summary>
    public string ServerMachinePlace { get; set; } = "";

    /// <summary>With <see cref="ServerMachinePlace"/>: files of this build's artifacts folder the server needs there besides its own (a broker's credentials).</summary>
    public ITaskItem[] SendFiles { get; set; } = [];

    /// <summary>Start the server again whenever its process exits without StopServer (the KillServer fault).</summary>
    public bool RestartOnExit { get; set; }

    /// <summary>Where the server's current process id is kept (rewritten by each restart).</summary>
    public string? PidFile { get; set; }

    [Output] public int ProcessId { get; private set; }
    [Output] public string Endpoint { get; private set; } = "";

    internal static string RegistrationKey(string name) => $"IntegrationTasks.Server/{name}";

    protected override async Task ExecuteAsync(CancellationToken cancellationToken)
    {
        BuildTermination.Watch();
        if (BuildEngine4.GetRegisteredTaskObject(RegistrationKey(Name), RegisteredTaskObjectLifetime.Build) is ServerProcess running
            && !running.HasExited)
            throw new IntegrationException(ErrorCodes.InvalidParameter, $"{Name} is already running (process {running.ProcessId}).");
        // Another namespace's address cannot be probed from here: a server there reports a taken port itself (IT4001).
        var prefix = ServerLaunch.Words(CommandPrefix);
        var place = Remote.MachinePlace.Read(ServerMachinePlace);
        if (Port > 0 && prefix.Count == 0 && place is null)
            Ports.EnsureFree(BindAddress, Port);

        var propertiesFile = PropertiesFile is { Length: > 0 } given ? given
            : LogFile is { Length: > 0 } log ? Path.ChangeExtension(log, ".properties.rsp")
            : throw new IntegrationException(ErrorCodes.InvalidParameter, $"{Name}: StartServer needs a LogFile or a PropertiesFile (where its properties are kept, owner-only).");
        var properties = Properties.DistinctBy(p => p.ItemSpec, StringComparer.OrdinalIgnoreCase)
            .ToDictionary(p => p.ItemSpec, p => p.GetMetadata("Value"), StringComparer.OrdinalIgnoreCase);
        var launch = place is null ? ServerLaunch.ForTarget(Project, Target, properties, propertiesFile).WithPrefix(prefix)
            : await place.LaunchSentAsync(Name, Target, properties, BindAddress, propertiesFile, [.. SendFiles.Select(f => f.ItemSpec)], cancellationToken).ConfigureAwait(false);
        var server = ServerProcess.Start(Name, launch, LogFile, ServerLog.To(Log, Name));
        try
        {
            // A short line on the screen; the whole command (a screenful of properties) for the detailed log.
            Log.LogMessage(MessageImportance.High, "Starting {0} (process {1}{2}).", Name, server.ProcessId,
                string.IsNullOrEmpty(LogFile) ? "" : $", its log in {LogFile}");
            Log.LogMessage(MessageImportance.Normal, "{0}: {1}", Name, launch);
            Endpoint = await server.WaitReadyAsync(TimeSpan.FromSeconds(ReadyTimeoutSeconds), cancellationToken).ConfigureAwait(false);
        }
        catch
        {
            server.Dispose();
            throw;
        }
        server.AttachLog(null); // from here on, lines wait for StopServer (and are in LogFile)
        ProcessId = server.ProcessId;
        if (!string.IsNullOrEmpty(PidFile) && place is null)
            server.PidFile = PidFile;
        else if (!string.IsNullOrEmpty(PidFile))
            File.Delete(PidFile); // the process here is ssh's: the server's own id is kept there, and nothing here may meter ssh for it
        server.RestartOnExit = RestartOnExit;
        server.RestartReadyTimeout = TimeSpan.FromSeconds(ReadyTimeoutSeconds);
        BuildEngine4.RegisterTaskObject(RegistrationKey(Name), server, RegisteredTaskObjectLifetime.Build, allowEarlyCollection: false);
        BuildTermination.StopOnTermination(() => server.StopAsync(TimeSpan.FromSeconds(5), CancellationToken.None));
        Log.LogMessage(MessageImportance.High, "{0} is ready at {1}.", Name, Endpoint);
    }
}

/// <summary>
/// Waits until a server started by <see cref="StartServer"/> runs and is ready. After the KillServer fault the server is started again
/// in the background; the next run waits here for it rather than find it still coming back.
/// </summary>
public sealed class WaitForServer : IntegrationTask
{
    [Required] public string Name { get; set; } = "";

    public int ReadyTimeoutSeconds { get; set; } = SettingDefaults.ServerReadyTimeoutSeconds;

    protected override async Task ExecuteAsync(CancellationToken cancellationToken)
    {
        if (BuildEngine4.GetRegisteredTaskObject(StartServer.RegistrationKey(Name), RegisteredTaskObjectLifetime.Build) is not ServerProcess server)
            throw new IntegrationException(ErrorCodes.ServerNotRunning, $"{Name} was not started by this build.");
        await server.WhenRunningAsync(TimeSpan.FromSeconds(ReadyTimeoutSeconds), cancellationToken).ConfigureAwait(false);
    }
}
