using System.Globalization;
using IntegrationTasks.Hosting.Remote;
using IntegrationTasks.Transfer;

namespace IntegrationTasks.Results;

/// <summary>
/// One planned run with its clients on the client machines (<c>-p:ClientMachines</c>): each machine is sent what a client needs
/// (the authority's certificate, the client certificate and key, the token and the brokers' users: no server key), runs the same
/// run as this build would (ClientMachineRun, from the copy there, against its own database, verifying its own rows), all starting
/// at one agreed moment, and its figures come back over the connection. They are merged as several client machines' runs always
/// are (<see cref="ClientMachineRuns"/>) into the run file this build records. A machine that fails fails the run, with its words.
/// </summary>
public sealed class RunOnClientMachines : IntegrationTask
{
    /// <summary>The client machines' places (<see cref="MachinePlace"/>'s files, <c>a+b</c>).</summary>
    [Required] public string Places { get; set; } = "";
    [Required] public string Transport { get; set; } = "";

    /// <summary>Where the merged run is written for RecordMeasurement.</summary>
    [Required] public string RunFile { get; set; } = "";
    public string TlsFolder { get; set; } = "";

    /// <summary>The credentials files a client signs in with (the service token, the brokers' users), those present sent.</summary>
    public ITaskItem[] CredentialFiles { get; set; } = [];

    /// <summary>The transfer's own limit: a machine's run may take that and its start-up.</summary>
    public int TimeoutSeconds { get; set; } = SettingDefaults.TimeoutSeconds;

    /// <summary>How far ahead the agreed start is set: time for every machine's build to start and reach it.</summary>
    public static readonly TimeSpan StartLead = TimeSpan.FromSeconds(8);

    private const string RunMarker = "IT-CLIENT-MACHINE-RUN";

    protected override async Task ExecuteAsync(CancellationToken cancellationToken)
    {
        var places = Places.Split('+').Where(p => p.Length > 0).Select(p => MachinePlace.Read(p)!).ToList();
        var given = BuildEngine6.GetGlobalProperties();
        var responseFiles = await Task.WhenAll(places.Select((place, i) => SendAsync(place, i + 1, given, cancellationToken))).ConfigureAwait(false);
        // Agreed once everything is there: what is left before it is each machine's build starting.
        var startAt = (DateTimeOffset.UtcNow + StartLead).ToString("yyyy-MM-ddTHH:mm:ssZ", CultureInfo.InvariantCulture);
        var runs = await Task.WhenAll(places.Select((place, i) => RunThereAsync(place, responseFiles[i], startAt, cancellationToken))).ConfigureAwait(false);
        var merged = ClientMachineRuns.Merge(runs).Single() with
        {
            RowsMatched = runs.Sum(r => r.RowsMatched ?? 0), RowsDuplicated = runs.Sum(r => r.RowsDuplicated ?? 0),
        };
        MeasurementLog.WriteSingle(RunFile, merged);
        Log.LogMessage(MessageImportance.High, "{0}: {1} client machines from {2}, {3:N0} records in {4:F3} s, each machine's rows verified there.",
            Transport, runs.Length, startAt, merged.Records, merged.ElapsedSeconds);
    }

    /// <summary>
    /// Sends a machine what its client needs and this run as the build here has it (the plan's step among its properties), its
    /// paths moved to the machine's folder, with the machine's own settings (its folder, a name, its own log); the agreed start
    /// comes on its command line. Returns the response file there.
    /// </summary>
    private async Task<string> SendAsync(MachinePlace place, int number, IReadOnlyDictionary<string, string> given, CancellationToken cancellationToken)
    {
        var properties = given.Where(p => !p.Key.StartsWith('_') && p.Key is not ("ServerMachine" or "ClientMachines" or "SshConfig" or "RemoteFolder"))
            .ToDictionary(p => p.Key, p => place.Map(p.Value), StringComparer.OrdinalIgnoreCase);
        properties["ArtifactsDir"] = place.ArtifactsDir;
        properties["ClientMachine"] = place.Destination;
        properties["ResultsLog"] = ResultsLogThere(place);
        properties["History"] = "false";
        return await place.SendPropertiesAsync(properties, Path.Combine(place.LocalArtifactsDir, "logs", $"client-machine-{number}.properties.rsp"), ClientCredentials(),
            cancellationToken).ConfigureAwait(false);
    }

    private static string ResultsLogThere(MachinePlace place) => $"{place.ArtifactsDir}results/client-machine-runs.jsonl";

    private async Task<Measurement> RunThereAsync(MachinePlace place, string responseFile, string startAt, CancellationToken cancellationToken)
    {
        var resultsLog = ResultsLogThere(place);
        var script = $"{place.BuildCommand("ClientMachineRun", "m", responseFile, SshMachine.Quote("-p:StartAt=" + startAt))}; rc=$?; rm -f {SshMachine.Quote(responseFile)}; "
                     + $"echo {RunMarker}; tail -n 1 {SshMachine.Quote(resultsLog)}; exit $rc";
        var outcome = await place.Machine.RunAsync(["sh", "-c", script], TimeSpan.FromSeconds(TimeoutSeconds) + TimeSpan.FromMinutes(2), cancellationToken).ConfigureAwait(false);
        var lines = outcome.Output.Split('\n');
        var marker = Array.FindIndex(lines, l => l.Trim() == RunMarker);
        foreach (var line in lines.Take(marker < 0 ? lines.Length : marker).Where(l => l.Trim().Length > 0))
            Log.LogMessage(MessageImportance.Low, "[{0}] {1}", place.Destination, line.TrimEnd());
        if (outcome.ExitCode != 0 || marker < 0 || marker + 1 >= lines.Length)
            throw new IntegrationException(ErrorCodes.TransferFailed,
                $"{Transport} on client machine {place.Destination} failed (exit {outcome.ExitCode}): {string.Join(" ", lines.Take(Math.Max(marker, 0)).Where(l => l.Contains("error", StringComparison.Ordinal)).TakeLast(3).Select(l => l.Trim()))}{outcome.Errors.Trim()}");
        var run = System.Text.Json.JsonSerializer.Deserialize<Measurement>(lines[marker + 1], MeasurementLog.Json)
                  ?? throw new IntegrationException(ErrorCodes.ResultsUnreadable, $"{place.Destination} sent no run.");
        return run.StartAt?.ToString("yyyy-MM-ddTHH:mm:ssZ", CultureInfo.InvariantCulture) == startAt && run.ClientMachine == place.Destination ? run
            : throw new IntegrationException(ErrorCodes.ResultsUnreadable, $"{place.Destination}'s last run is not this one (started {run.StartAt:O} as {run.ClientMachine}).");
    }

    /// <summary>What a client needs of this build's credentials: the authority to trust, its own certificate, the token, the brokers' users.</summary>
    private List<string> ClientCredentials()
    {
        var files = new List<string>();
        if (TlsFolder.Length > 0)
            files.AddRange(new[] { Hosting.TlsCertificates.AuthorityFile, Hosting.TlsCertificates.ClientCertificateFile, Hosting.TlsCertificates.ClientKeyFile }
                .Select(f => Path.Combine(TlsFolder, f)).Where(File.Exists));
        files.AddRange(CredentialFiles.Select(f => f.ItemSpec).Where(File.Exists));
        return files;
    }
}
