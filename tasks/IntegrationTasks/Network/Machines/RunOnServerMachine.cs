using IntegrationTasks.Hosting;
using IntegrationTasks.Hosting.Remote;

namespace IntegrationTasks.Network;

/// <summary>
/// Runs a target of the suite (RunAll) with its servers on another machine (<c>-p:ServerMachine</c>): checks the machine and
/// places the suite there (<see cref="DeploySuite.PlaceAsync"/>), opens one ssh connection to it that every later command shares,
/// makes the run's folder there, and runs the same build here with the place of its servers (<see cref="MachinePlace"/>).
/// Afterwards, on failure and on Ctrl+C too, the response files there are removed and the connection closed, which ends every
/// session still open there.
/// </summary>
public sealed class RunOnServerMachine : MachinesTask
{
    [Required] public string Project { get; set; } = "";
    [Required] public string Target { get; set; } = "";

    /// <summary>This build's artifacts folder (what the run's folder on each machine stands for).</summary>
    [Required] public string ArtifactsDir { get; set; } = "";

    /// <summary>The address the clients here reach the server machine at, and its servers listen on; empty: ssh's own for it.</summary>
    public string ServerAddress { get; set; } = "";

    /// <summary>The brokers' programs (item spec = a broker; metadata Program, Package): those found there are started there when the plan needs them.</summary>
    public ITaskItem[] BrokerPrograms { get; set; } = [];

    public string? LogFile { get; set; }

    /// <summary>Where the inner build's global properties are written for it, owner-only, and where the servers' place is kept.</summary>
    [Required] public string PropertiesFile { get; set; } = "";
    [Required] public string PlaceFile { get; set; } = "";

    protected override async Task ExecuteAsync(CancellationToken cancellationToken)
    {
        BuildTermination.Watch(); // SIGTERM is Ctrl+C here too: the build cancelled, the connections closed, exit code 143
        var (machine, clientMachines) = Machines();
        var placed = await DeploySuite.PlaceAsync([(machine, []), .. clientMachines.Select(c => (c, (IReadOnlyList<RemoteRequirement>)[]))],
            Root, Configuration, RemoteFolder, Log, cancellationToken).ConfigureAwait(false);
        var address = ServerAddress.Length > 0 ? ServerAddress : await AddressOfAsync(machine, cancellationToken).ConfigureAwait(false);
        var local = MachinePlace.Folder(Path.GetFullPath(ArtifactsDir));
        var connections = new List<SshMasterConnection>();
        var places = new List<MachinePlace>();
        var placeFiles = new List<string>();
        // One cleanup, whoever comes first: this task's end, or the way out of a terminated build (which waits for it, so that no
        // ssh of it outlives the build).
        var cleanup = new Lazy<Task>(() => CleanUpAsync(places, connections));
        using var closeOnTermination = BuildTermination.StopOnTermination(() => cleanup.Value);
        try
        {
            for (var i = 0; i < placed.Count; i++)
            {
                var role = i == 0 ? "server" : $"client-{i}";
                var (place, connection) = await OpenAsync(placed[i], role, i == 0 ? address : "", local, cancellationToken).ConfigureAwait(false);
                if (connection is not null)
                    connections.Add(connection);
                places.Add(place);
                var file = i == 0 ? PlaceFile : Path.Combine(Path.GetDirectoryName(Path.GetFullPath(PlaceFile))!, $"{role}-machine.json");
                place.Write(file);
                placeFiles.Add(file);
            }
            var server = places[0];
            var shared = server.Machine;
            var brokers = BrokerPrograms.Select(b => new RemoteRequirement(b.ItemSpec, b.GetMetadata("Program"), b.GetMetadata("Package"))).ToList();
            var programs = brokers.Count == 0 ? [] : (await MachineFacts.OfAsync(shared, brokers, cancellationToken).ConfigureAwait(false)).Programs;
            var brokersThere = brokers.Where(b => programs.Contains(b.Program)).Select(b => b.Name).ToList();
            // The network between the machines once, before anything runs on it: what every figure stands on, and what the user pays for.
            var link = await MeasureLinkAsync(shared, cancellationToken).ConfigureAwait(false);
            var given = BuildEngine6.GetGlobalProperties();
            var tls = given.TryGetValue("Tls", out var saidTls) ? saidTls : "true";
            var properties = new Dictionary<string, string>(given, StringComparer.OrdinalIgnoreCase)
            {
                ["Hosts"] = RunKey.TwoMachines,
                ["_InsideServerMachineRun"] = "true",
                ["_ServerMachinePlace"] = PlaceFile,
                ["_ClientMachinePlaces"] = string.Join('+', placeFiles.Skip(1)),
                ["_ServerMachineDescription"] = server.Description,
                ["_ClientMachinesDescription"] = string.Join("; ", places.Skip(1).Select(p => p.Description)),
                ["HostsLink"] = link,
                ["_BrokersThere"] = string.Join(';', brokersThere),
                ["HostName"] = address,
                ["BindAddress"] = address,
                // Between machines TLS with client certificates unless said otherwise: what crosses the network is encrypted and
                // only this build's clients are served.
                ["Tls"] = tls,
                ["ClientCertificates"] = given.TryGetValue("ClientCertificates", out var certificates) ? certificates : tls == "false" ? "false" : "true",
            };
            var launch = ServerLaunch.ForTarget(Project, Target, properties, PropertiesFile);
            Log.LogMessage(MessageImportance.High, "Server machine: running {0} here, its servers on {1}, in {2}{3}.", Target, server.Description, server.ArtifactsDir,
                places.Count == 1 ? "" : $"; its clients on {string.Join(" and ", places.Skip(1).Select(p => p.Destination))}");
            // A lost connection ends every server there: the build here is stopped at once rather than fail run after run.
            using var lost = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
            foreach (var connection in connections)
                _ = connection.Lost.ContinueWith(_ => CancelUnlessDone(lost), CancellationToken.None, TaskContinuationOptions.ExecuteSynchronously, TaskScheduler.Default);
            try
            {
                await InnerBuild.RunAsync("client side", launch, LogFile, Log, $"{Target} with its servers on {machine.Destination}", lost.Token).ConfigureAwait(false);
            }
            catch (Exception e) when (e is OperationCanceledException or IntegrationException && lost.IsCancellationRequested && !cancellationToken.IsCancellationRequested)
            {
                var gone = connections.FirstOrDefault(c => c.Lost.IsCompleted)?.Machine.Destination ?? machine.Destination;
                throw new IntegrationException(ErrorCodes.RemoteUnreachable,
                    $"The ssh connection to {gone} was lost during {Target}, and everything of the run there with it: the run under way failed and the rest were not run. The runs so far are in the results folder's runs.jsonl.", e);
            }
        }
        finally
        {
            await cleanup.Value.ConfigureAwait(false);
            foreach (var file in placeFiles)
                File.Delete(file);
        }
    }

    /// <summary>What was sent there removed, then every connection closed.</summary>
    private async Task CleanUpAsync(IReadOnlyList<MachinePlace> places, IReadOnlyList<SshMasterConnection> connections)
    {
        foreach (var place in places.ToList())
            await RemoveSecretsAsync(place).ConfigureAwait(false);
        foreach (var connection in connections.ToList())
            await connection.DisposeAsync().ConfigureAwait(false);
    }

    /// <summary>
    /// One machine's place: a connection of its own that every later command to it shares (none when ArtifactsDir's path is too
    /// long for its socket), and the run's folder there — one a controlling machine and role, reused by its next run (its data set
    /// topped up, not made again).
    /// </summary>
    private async Task<(MachinePlace Place, SshMasterConnection? Connection)> OpenAsync((SshMachine Machine, MachineFacts Facts, string Folder) placed, string role,
        string address, string local, CancellationToken cancellationToken)
    {
        var (machine, facts, suite) = placed;
        var controlPath = SshMasterConnection.UsableControlPath($"{local}logs/ssh-{Environment.ProcessId}-{role}.sock");
        if (controlPath is null)
            Log.LogMessage(MessageImportance.High, "{0}: ArtifactsDir's path is too long for ssh's connection socket; each command to it signs in on its own.", machine.Destination);
        else
            Common.OwnerOnlyFiles.CreateDirectory(Path.GetDirectoryName(controlPath)!);
        var connection = controlPath is null ? null : await SshMasterConnection.OpenAsync(machine, controlPath, cancellationToken).ConfigureAwait(false);
        var shared = connection?.Machine ?? machine;
        var folder = $"{RemoteFolder.Trim().TrimEnd('/')}/runs/{Environment.MachineName}-{role}/artifacts";
        ExternalCommand.Outcome made;
        try
        {
            made = await shared.RunAsync(["sh", "-c", $"umask 077 && mkdir -p {SshMachine.Quote(folder)} && cd {SshMachine.Quote(folder)} && pwd"],
                TimeSpan.FromSeconds(30), cancellationToken).ConfigureAwait(false);
            if (made.ExitCode != 0)
                throw new IntegrationException(ErrorCodes.RemotePrerequisiteMissing, $"Could not make {folder} on {machine.Destination}: {made.Errors.Trim()}");
        }
        catch
        {
            if (connection is not null)
                await connection.DisposeAsync().ConfigureAwait(false);
            throw;
        }
        var place = new MachinePlace(machine.Destination, machine.ConfigFile, controlPath, facts.HostName, suite, MachinePlace.Folder(made.Output.Trim()), local,
            $"{machine.Destination}{(address.Length > 0 ? $" ({address})" : "")}: {facts.Describe()}");
        return (place, connection);
    }

    /// <summary>The connection's end after the build here is over (this task closes it) cancels nothing.</summary>
    private static void CancelUnlessDone(CancellationTokenSource source)
    {
        try
        {
            source.Cancel();
        }
        catch (ObjectDisposedException)
        {
        }
    }

    /// <summary>The link's figures, or why they are missing: a link that cannot be measured (no bash there) does not stop the run.</summary>
    private async Task<string> MeasureLinkAsync(SshMachine machine, CancellationToken cancellationToken)
    {
        try
        {
            var link = await LinkProbe.AcrossAsync(machine, cancellationToken).ConfigureAwait(false);
            Log.LogMessage(MessageImportance.High, "Server machine: the link measured, {0}.", link);
            return link.ToString();
        }
        catch (IntegrationException e)
        {
            Log.LogWarning(null, e.Code, null, null, 0, 0, 0, 0, "{0}", e.Message);
            return "not measured: " + e.Message;
        }
    }

    /// <summary>
    /// What was sent there that a run's end must not leave (the response files with their passwords, the server's key, the token,
    /// the brokers' users): removed whatever the end; each run sends them again.
    /// </summary>
    private async Task RemoveSecretsAsync(MachinePlace place)
    {
        var folder = place.ArtifactsDir;
        try
        {
            await place.Machine.RunAsync(["sh", "-c", $"rm -rf {SshMachine.Quote(folder + "tls")} {SshMachine.Quote(folder + "credentials")} && rm -f {SshMachine.Quote(folder + "logs")}/*.rsp"],
                TimeSpan.FromSeconds(30), CancellationToken.None).ConfigureAwait(false);
        }
        catch (IntegrationException e)
        {
            Log.LogWarning(null, e.Code, null, null, 0, 0, 0, 0, "{0}: what the run sent ({1}tls, credentials, logs/*.rsp) could not be removed there: {2}", place.Destination, folder, e.Message);
        }
    }

    /// <summary>The machine's address as ssh reaches it (its config's HostName for an alias), as an IP address: what a server binds to.</summary>
    private static async Task<string> AddressOfAsync(SshMachine machine, CancellationToken cancellationToken)
    {
        string[] words = ["-G", .. machine.ConfigFile is null ? Array.Empty<string>() : ["-F", machine.ConfigFile], machine.Destination];
        var outcome = await ExternalCommand.RunAsync("ssh", words, TimeSpan.FromSeconds(10), cancellationToken).ConfigureAwait(false);
        var host = outcome.Output.Split('\n').Select(l => l.Trim()).FirstOrDefault(l => l.StartsWith("hostname ", StringComparison.Ordinal))?["hostname ".Length..].Trim()
                   ?? machine.Host;
        if (System.Net.IPAddress.TryParse(host, out var address))
            return address.ToString();
        System.Net.IPAddress[] addresses;
        try
        {
            addresses = await System.Net.Dns.GetHostAddressesAsync(host, cancellationToken).ConfigureAwait(false);
        }
        catch (System.Net.Sockets.SocketException e)
        {
            throw new IntegrationException(ErrorCodes.RemoteUnreachable, $"{machine.Destination}: {host} has no address here ({e.Message}); name it with -p:ServerAddress=.", e);
        }
        return (addresses.FirstOrDefault(a => a.AddressFamily == System.Net.Sockets.AddressFamily.InterNetwork) ?? addresses.FirstOrDefault())?.ToString()
               ?? throw new IntegrationException(ErrorCodes.RemoteUnreachable, $"{machine.Destination}: {host} has no address here; name it with -p:ServerAddress=.");
    }
}
