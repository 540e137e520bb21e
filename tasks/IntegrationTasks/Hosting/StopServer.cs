namespace IntegrationTasks.Hosting;

/// <summary>Stops a server started by <see cref="StartServer"/> and forwards what it logged meanwhile.</summary>
public sealed class StopServer : IntegrationTask
{
    [Required] public string Name { get; set; } = "";

    public int StopTimeoutSeconds { get; set; } = SettingDefaults.ServerStopTimeoutSeconds;

    /// <summary>Set when stopping after a failure: a server that is not running is then no error.</summary>
    public bool IfRunning { get; set; }

    [Output] public long PeakWorkingSetBytes { get; private set; }
    [Output] public int ExitCode { get; private set; }

    protected override async Task ExecuteAsync(CancellationToken cancellationToken)
    {
        var key = StartServer.RegistrationKey(Name);
        if (BuildEngine4.GetRegisteredTaskObject(key, RegisteredTaskObjectLifetime.Build) is not ServerProcess server)
        {
            if (!IfRunning)
                throw new IntegrationException(ErrorCodes.ServerNotRunning, $"{Name} was not started by this build; nothing to stop.");
            return;
        }
        BuildEngine4.UnregisterTaskObject(key, RegisteredTaskObjectLifetime.Build);
        using (server)
        {
                server.AttachLog(ServerLog.To(Log, Name));
            PeakWorkingSetBytes = ProcessMemory.PeakBytesOfTree(server.ProcessId) ?? 0;
            var exitCode = await server.StopAsync(TimeSpan.FromSeconds(StopTimeoutSeconds), cancellationToken).ConfigureAwait(false);
            server.AttachLog(null);
            if (exitCode is null)
                throw new IntegrationException(ErrorCodes.ServerStopTimeout,
                    $"{Name} did not stop within {StopTimeoutSeconds} s and was killed.");
            ExitCode = exitCode.Value;
            Log.LogMessage(MessageImportance.High, "{0} stopped (exit code {1}, peak memory {2:N0} MB{3}).",
                Name, ExitCode, PeakWorkingSetBytes / (1024 * 1024), server.Restarts switch
                {
                    0 => "",
                    1 => ", started again once after its process exited",
                    var n => $", started again {n} times after its process exited",
                });
            if (ExitCode != 0 && !IfRunning)
                throw new IntegrationException(ErrorCodes.ServerExited,
                    $"{Name} exited with code {ExitCode}. Its last output:{Environment.NewLine}{server.RecentOutput()}");
        }
    }
}
