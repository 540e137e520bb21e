using IntegrationTasks.Hosting.Remote;

namespace IntegrationTasks.Network;

/// <summary>
/// The server machine's ServiceTable, made there by the suite's own generator from the same seed, count and payload as the one
/// made here (which this build's clients verify their rows against), and proven the same: its fingerprint computed there equals the
/// one computed here (IT4020 when not). No table crosses between the machines.
/// </summary>
public sealed class CheckServerMachineData : IntegrationTask
{
    /// <summary>The server's place (<see cref="MachinePlace"/>'s file).</summary>
    [Required] public string ServerMachinePlace { get; set; } = "";
    [Required] public string ServerProvider { get; set; } = "";
    [Required] public string ServerConnString { get; set; } = "";
    [Required] public int Records { get; set; }
    public int PayloadBytes { get; set; }
    public string PayloadKind { get; set; } = "";
    public string Configuration { get; set; } = "Release";

    [Output] public string DataSetFingerprintText { get; private set; } = "";

    protected override async Task ExecuteAsync(CancellationToken cancellationToken)
    {
        var place = Hosting.Remote.MachinePlace.Read(ServerMachinePlace)!;
        var here = await Data.DataSetFingerprint.OfAsync(Data.Database.Create(ServerProvider, ServerConnString), Records, cancellationToken).ConfigureAwait(false);
        string[] properties =
        [
            "SkipTasksBuild=true", "IntegrationTasksFromSource=false", $"Configuration={Configuration}", $"ArtifactsDir={place.ArtifactsDir}",
            $"ServerProvider={ServerProvider}", $"ServerConnString={Hosting.ServerLaunch.Escape(place.Map(ServerConnString))}",
            FormattableString.Invariant($"Records={Records}"), FormattableString.Invariant($"PayloadBytes={PayloadBytes}"), $"PayloadKind={PayloadKind}", "Fingerprint=true",
        ];
        var script = $"cd {SshMachine.Quote(place.Suite)} && d=$(command -v dotnet || echo \"$HOME/.dotnet/dotnet\") && exec \"$d\" msbuild build.proj -t:GenerateData -nologo -v:m -tl:off -nr:false "
                     + string.Join(' ', properties.Select(p => SshMachine.Quote("-p:" + p)));
        var outcome = await place.Machine.RunAsync(["sh", "-c", script], TimeSpan.FromMinutes(30), cancellationToken).ConfigureAwait(false);
        var there = outcome.Output.Split('\n').Select(l => l.Trim()).FirstOrDefault(l => l.StartsWith(Marker, StringComparison.Ordinal))?[Marker.Length..].Trim();
        if (outcome.ExitCode != 0 || there is null)
            throw new IntegrationException(ErrorCodes.RemoteDataSetDiffers,
                $"The data set could not be made on {place.Destination} (exit {outcome.ExitCode}): {Last(outcome.Output + outcome.Errors)}");
        if (there != here)
            throw new IntegrationException(ErrorCodes.RemoteDataSetDiffers,
                $"ServiceTable on {place.Destination} is {there}, here {here}: the two machines' generators made different data, so no run could be verified. The suite there is another version, or its database is not the one named.");
        DataSetFingerprintText = here;
        Log.LogMessage(MessageImportance.High, "ServiceTable on {0}: {1}, the same as here.", place.Destination, there);
    }

    private const string Marker = "Data set:";

    private static string Last(string text) =>
        string.Join(" ", text.Split('\n', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries).TakeLast(3));
}
