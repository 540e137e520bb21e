using System.Globalization;
using IntegrationTasks.Data;

namespace IntegrationTasks.Results;

/// <summary>RunAll's calibration before its first transport (Phase=Before) and after its last (Phase=After): see <see cref="MachineNoise"/>.</summary>
public sealed class CalibrateNoise : IntegrationTask
{
    [Required] public string Phase { get; set; } = "";
    [Required] public string ServerProvider { get; set; } = "";
    [Required] public string ServerConnString { get; set; } = "";

    /// <summary>The client's database, where the write loop inserts (into a scratch table, dropped after).</summary>
    [Required] public string ClientProvider { get; set; } = "";
    [Required] public string ClientConnString { get; set; } = "";

    /// <summary>Where the readings are appended (calibration.jsonl in the results' state folder).</summary>
    [Required] public string ReadingsFile { get; set; } = "";

    /// <summary>How long each loop runs.</summary>
    public double Seconds { get; set; } = 1;

    protected override async Task ExecuteAsync(CancellationToken cancellationToken)
    {
        if (Phase is not ("Before" or "After"))
            throw new IntegrationException(ErrorCodes.InvalidParameter, $"Phase must be Before or After (was '{Phase}').");
        if (!(Seconds is > 0 and <= 60))
            throw new IntegrationException(ErrorCodes.InvalidParameter, $"CalibrationSeconds must be above 0 and at most 60 (was {Seconds}).");
        if (Phase == "Before" && File.Exists(ReadingsFile))
            File.Delete(ReadingsFile);
        var duration = TimeSpan.FromSeconds(Seconds);
        var cpu = MachineNoise.CpuLoop(Phase, duration);
        var memory = MachineNoise.MemoryLoop(Phase, duration);
        var database = await MachineNoise.DatabaseLoopAsync(Phase, Database.Create(ServerProvider, ServerConnString), duration, cancellationToken).ConfigureAwait(false);
        var write = await MachineNoise.WriteLoopAsync(Phase, Database.Create(ClientProvider, ClientConnString), duration, cancellationToken).ConfigureAwait(false);
        foreach (var reading in new[] { cpu, memory, database, write })
            MachineNoise.Append(ReadingsFile, reading);
        Log.LogMessage(MessageImportance.High,
            "Machine noise {0} the runs: {1}.", Phase == "Before" ? "before" : "after",
            string.Join(", ", new[] { cpu, memory, database, write }.Select(r => string.Create(CultureInfo.InvariantCulture,
                $"{r.Loop.ToLowerInvariant().Replace("cpu", "CPU", StringComparison.Ordinal)} {r.MeanMs:F2} ms a chunk ±{r.SpreadPercent:F1} % ({r.Chunks} chunks)"))));
        if (Phase == "After" && MachineNoise.BuildWarning(MachineNoise.Read(ReadingsFile)) is { } warning)
            Log.LogWarning(null, ErrorCodes.MachineNoisy, null, null, 0, 0, 0, 0, "{0}", warning);
    }
}
