namespace IntegrationTasks.Results;

/// <summary>
/// Before a run whose server is on another machine: its CPU so far and a fresh start of its peak memory, so that the run's
/// reading afterwards (<see cref="RecordMeasurement"/>) holds the run's own — as a server here is metered over the transfer itself.
/// </summary>
public sealed class ReadServerThereBeforeRun : IntegrationTask
{
    /// <summary>The server's place (<see cref="Hosting.Remote.MachinePlace"/>'s file).</summary>
    [Required] public string ServerMachinePlace { get; set; } = "";
    [Required] public string ServerName { get; set; } = "";

    /// <summary>The runs' log, whose build-wide state keeps the reading.</summary>
    [Required] public string ResultsFile { get; set; } = "";

    protected override async Task ExecuteAsync(CancellationToken cancellationToken)
    {
        var place = Hosting.Remote.MachinePlace.Read(ServerMachinePlace)!;
        try
        {
            var reading = await place.ReadServerAsync(ServerName, statsFile: null, afterRun: false, cancellationToken).ConfigureAwait(false);
            RunState.For(BuildEngine, ResultsFile).ServerCpuSinceLastReading(ServerName, reading.ProcessId, reading.CpuSeconds);
        }
        catch (IntegrationException e)
        {
            // The run itself says whether its server serves; only its figures would be missing, as after the run (RecordMeasurement).
            Log.LogWarning(null, e.Code, null, null, 0, 0, 0, 0, "{0}: the server could not be read there before the run: {1}", ServerName, e.Message);
        }
    }
}
