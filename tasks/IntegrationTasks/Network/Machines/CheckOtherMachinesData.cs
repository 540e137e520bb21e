using IntegrationTasks.Hosting.Remote;

namespace IntegrationTasks.Network;

/// <summary>
/// ServiceTable on each other machine of the run — the server machine's, which its servers serve, and each client machine's, which
/// its clients verify their rows against — made there by the suite's own generator from the same seed, count and payload as the one
/// made here, and proven the same: its fingerprint computed there equals the one computed here (IT4020 when not). No table crosses
/// between the machines.
/// </summary>
public sealed class CheckOtherMachinesData : IntegrationTask
{
    /// <summary>The server's place (<see cref="MachinePlace"/>'s file).</summary>
    [Required] public string ServerMachinePlace { get; set; } = "";

    /// <summary>The client machines' places (<c>a+b</c>), if the clients run on other machines.</summary>
    public string ClientMachinePlaces { get; set; } = "";
    [Required] public string ServerProvider { get; set; } = "";
    [Required] public string ServerConnString { get; set; } = "";
    [Required] public int Records { get; set; }
    public int PayloadBytes { get; set; }
    public string PayloadKind { get; set; } = "";
    public string Configuration { get; set; } = "Release";

    [Output] public string DataSetFingerprintText { get; private set; } = "";

    protected override async Task ExecuteAsync(CancellationToken cancellationToken)
    {
        var here = await Data.DataSetFingerprint.OfAsync(Data.Database.Create(ServerProvider, ServerConnString), Records, cancellationToken).ConfigureAwait(false);
        var places = new[] { ServerMachinePlace }.Concat(ClientMachinePlaces.Split('+')).Where(f => f.Length > 0).Select(f => MachinePlace.Read(f)!).ToList();
        // One machine after another: on a machine of its own each would be quick, and the server machine may share a host with one.
        foreach (var place in places)
            await CheckAsync(place, here, cancellationToken).ConfigureAwait(false);
        DataSetFingerprintText = here;
    }

    private async Task CheckAsync(MachinePlace place, string here, CancellationToken cancellationToken)
    {
        // In a response file, owner-only, as a server's properties are: a connection string may hold a password.
        var properties = new Dictionary<string, string>
        {
            ["Configuration"] = Configuration, ["ArtifactsDir"] = place.ArtifactsDir,
            ["ServerProvider"] = ServerProvider, ["ServerConnString"] = place.Map(ServerConnString),
            ["Records"] = Records.ToString(System.Globalization.CultureInfo.InvariantCulture),
            ["PayloadBytes"] = PayloadBytes.ToString(System.Globalization.CultureInfo.InvariantCulture), ["PayloadKind"] = PayloadKind, ["Fingerprint"] = "true",
        };
        var responseFile = await place.SendPropertiesAsync(properties, Path.Combine(place.LocalArtifactsDir, "logs", "data-set.properties.rsp"), [], cancellationToken)
            .ConfigureAwait(false);
        var script = $"{place.BuildCommand("GenerateData", "m", responseFile)}; rc=$?; rm -f {SshMachine.Quote(responseFile)}; exit $rc";
        var outcome = await place.Machine.RunAsync(["sh", "-c", script], TimeSpan.FromMinutes(30), cancellationToken).ConfigureAwait(false);
        var fingerprint = outcome.Output.Split('\n').Select(l => l.Trim()).FirstOrDefault(l => l.StartsWith(Marker, StringComparison.Ordinal))?[Marker.Length..].Trim();
        if (outcome.ExitCode != 0 || fingerprint is null)
            throw new IntegrationException(ErrorCodes.RemoteDataSetDiffers,
                $"The data set could not be made on {place.Destination} (exit {outcome.ExitCode}): {Last(outcome.Output + outcome.Errors)}");
        if (fingerprint != here)
            throw new IntegrationException(ErrorCodes.RemoteDataSetDiffers,
                $"ServiceTable on {place.Destination} is {fingerprint}, here {here}: the two machines' generators made different data, so no run could be verified. The suite there is another version, or its database is not the one named.");
        Log.LogMessage(MessageImportance.High, "ServiceTable on {0}: {1}, the same as here.", place.Destination, fingerprint);
    }

    private const string Marker = "Data set:";

    private static string Last(string text) =>
        string.Join(" ", text.Split('\n', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries).TakeLast(3));
}
