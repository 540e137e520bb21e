using System.Formats.Tar;
using System.Globalization;
using System.IO.Compression;
using System.Text.Json;

namespace IntegrationTasks.Hosting.Remote;

/// <summary>
/// Another machine a RunAll runs its servers on (<c>-p:ServerMachine</c>) or its clients on (<c>-p:ClientMachines</c>): the
/// machine, reached through the run's one ssh connection to it; the suite's copy there; the run's artifacts folder there, which
/// stands for this build's own (<see cref="LocalArtifactsDir"/>): every path given to a build there under this build's folder is
/// given under that one. Written once by the build that drives the machines (<see cref="Write"/>) and read by each task that
/// reaches it.
/// </summary>
public sealed record MachinePlace(string Destination, string? SshConfig, string? ControlPath, string HostName, string Suite, string ArtifactsDir,
    string LocalArtifactsDir, string Description)
{
    private static readonly JsonSerializerOptions Json = new() { WriteIndented = true };

    /// <summary>The machine, its commands going through the run's connection.</summary>
    public SshMachine Machine => SshMachine.Parse(Destination, SshConfig, nameof(Destination)) with { ControlPath = ControlPath };

    /// <summary>The place in <paramref name="file"/>; null when none is named (the servers run here).</summary>
    public static MachinePlace? Read(string? file)
    {
        if (string.IsNullOrEmpty(file))
            return null;
        if (!File.Exists(file))
            throw new IntegrationException(ErrorCodes.InvalidParameter, $"No machine's place at {file} (RunAll writes it with -p:ServerMachine or -p:ClientMachines).");
        return JsonSerializer.Deserialize<MachinePlace>(File.ReadAllText(file), Json)
               ?? throw new IntegrationException(ErrorCodes.InvalidParameter, $"{file} holds no machine's place.");
    }

    public void Write(string file)
    {
        Common.OwnerOnlyFiles.CreateDirectory(Path.GetDirectoryName(Path.GetFullPath(file))!);
        Common.OwnerOnlyFiles.Write(file, JsonSerializer.Serialize(this, Json));
    }

    /// <summary>A folder's path with one trailing '/', as both artifacts folders are kept.</summary>
    public static string Folder(string path) => path.TrimEnd('/') + "/";

    /// <summary>A value given to a server, its paths under this build's artifacts folder moved to the run's folder there.</summary>
    public string Map(string value) =>
        value == LocalArtifactsDir.TrimEnd('/') ? ArtifactsDir.TrimEnd('/') : value.Replace(LocalArtifactsDir, ArtifactsDir, StringComparison.Ordinal);

    /// <summary>Where a file of this build's artifacts folder is on the machine; IT1001 for one outside it (nothing else is sent there).</summary>
    public string RemotePath(string localFile)
    {
        var full = Path.GetFullPath(localFile);
        return full.StartsWith(LocalArtifactsDir, StringComparison.Ordinal) ? Map(full)
            : throw new IntegrationException(ErrorCodes.InvalidParameter,
                $"{full} is outside ArtifactsDir ({LocalArtifactsDir}): with a ServerMachine, what its servers are given is sent from ArtifactsDir only.");
    }

    /// <summary>
    /// Sends files of this build's artifacts folder to their places in the run's folder there, owner-only, in one gzipped tar over
    /// the connection (files already there are replaced).
    /// </summary>
    public async Task SendAsync(IReadOnlyCollection<string> localFiles, CancellationToken cancellationToken)
    {
        if (localFiles.Count == 0)
            return;
        var entries = localFiles.Select(f => (File: Path.GetFullPath(f), Name: RemotePath(f)[ArtifactsDir.Length..])).ToList();
        var folder = SshMachine.Quote(ArtifactsDir);
        var sent = await Machine.RunAsync(["sh", "-c", $"umask 077 && mkdir -p {folder} && tar --no-same-owner --no-same-permissions -xzf - -C {folder}"],
            TimeSpan.FromMinutes(2), cancellationToken, async (destination, token) =>
            {
                await using var gzip = new GZipStream(destination, CompressionLevel.Fastest, leaveOpen: true);
                await using var tar = new TarWriter(gzip, TarEntryFormat.Pax, leaveOpen: true);
                foreach (var (file, name) in entries)
                    await tar.WriteEntryAsync(file, name, token).ConfigureAwait(false);
            }).ConfigureAwait(false);
        if (sent.ExitCode != 0)
            throw new IntegrationException(ErrorCodes.RemotePrerequisiteMissing,
                $"Could not send {string.Join(", ", entries.Select(e => e.Name))} to {ArtifactsDir} on {Destination} (exit {sent.ExitCode}): {sent.Errors.Trim()}");
    }

    /// <summary>
    /// Sends a server what it needs there — its properties (paths moved to the run's folder there, the copy's built tasks used as
    /// they are) and the credentials they name — and returns its launch. The credentials are made here first where missing: the
    /// server's certificate from this build's authority (its key stays here), with the machine's own name among the certificate's,
    /// and the service token its clients here present. The authority's key stays here; nothing else of this build's credentials is sent.
    /// </summary>
    public async Task<ServerLaunch> LaunchSentAsync(string serverName, string target, IReadOnlyDictionary<string, string> properties, string bindAddress,
        string propertiesFile, IReadOnlyList<string> otherFiles, CancellationToken cancellationToken)
    {
        string? Value(string name) => properties.TryGetValue(name, out var value) && value.Length > 0 ? value : null;
        var files = new List<string>(otherFiles);
        if (Value("Tls") == "true" && Value("TlsFolder") is { } tlsFolder)
        {
            var certificates = TlsCertificates.Ensure(TlsCertificates.RequireFolder(tlsFolder),
                [.. TlsCertificates.NamesFor(bindAddress), .. HostName.Length > 0 ? [HostName] : Array.Empty<string>()]);
            files.AddRange([certificates.AuthorityPath, certificates.ServerCertificatePath, certificates.ServerKeyPath]);
        }
        if (Value("ServiceToken") == "true" && Value("CredentialsFolder") is { } credentials)
        {
            var tokenFile = Path.Combine(credentials, ServiceToken.FileName);
            ServiceToken.ForServer(serverName, bindAddress, tokenFile, clientCertificates: false);
            files.Add(tokenFile);
        }
        var mapped = properties.ToDictionary(p => p.Key, p => Map(p.Value), StringComparer.OrdinalIgnoreCase);
        return Launch(serverName, target, await SendPropertiesAsync(mapped, propertiesFile, files, cancellationToken).ConfigureAwait(false));
    }

    /// <summary>
    /// A build's global properties for the copy there (which uses its built tasks as they are), written here as MSBuild's response
    /// file, owner-only, and sent there with <paramref name="otherFiles"/>: never on a command line. Returns the file's path there.
    /// </summary>
    public async Task<string> SendPropertiesAsync(IReadOnlyDictionary<string, string> properties, string localFile, IReadOnlyList<string> otherFiles,
        CancellationToken cancellationToken)
    {
        var forTheCopy = new Dictionary<string, string>(properties, StringComparer.OrdinalIgnoreCase) { ["IntegrationTasksFromSource"] = "false" };
        var responseFile = ServerLaunch.WriteResponseFile(forTheCopy, localFile);
        await SendAsync([responseFile, .. otherFiles], cancellationToken).ConfigureAwait(false);
        return RemotePath(responseFile);
    }

    /// <summary>
    /// The shell that runs a target of the copy there with its properties in a response file there: in the copy's folder, the
    /// machine's dotnet (on its PATH, else ~/.dotnet), no node reuse, no terminal logger. <paramref name="replaceShell"/>: the build
    /// takes the shell's process (and so the id the shell wrote).
    /// </summary>
    public string BuildCommand(string target, string verbosity, string responseFile, string arguments = "", bool replaceShell = false) =>
        $"cd {SshMachine.Quote(Suite)} && d=$(command -v dotnet || echo \"$HOME/.dotnet/dotnet\") && {(replaceShell ? "exec " : "")}\"$d\" msbuild build.proj -t:{target} "
        + $"-nologo -v:{verbosity} -tl:off -nr:false {(arguments.Length > 0 ? arguments + " " : "")}@{SshMachine.Quote(responseFile)}";

    /// <summary>Where a server's process id is kept there (its launch writes it; <see cref="ReadServerAsync"/> reads it).</summary>
    public string PidFile(string serverName) => $"{ArtifactsDir}logs/{serverName}.pid";

    /// <summary>
    /// The launch of a server target of the copy there, as <see cref="ServerLaunch.ForTarget"/> launches one here: its properties in a
    /// response file already sent (<paramref name="responseFile"/>, there), told to stop when its input closes (the session's input:
    /// closing the session is enough). Its shell writes its process id first, then becomes the build.
    /// </summary>
    public ServerLaunch Launch(string serverName, string target, string responseFile)
    {
        var script = $"echo $$ > {SshMachine.Quote(PidFile(serverName))} && "
                     + BuildCommand(target, "n", responseFile, "-p:StopOnStdinClose=true -clp:NoSummary", replaceShell: true);
        var words = Machine.Command(["sh", "-c", script]);
        return new ServerLaunch(words[0], [.. words.Skip(1)], Path.GetFullPath(LocalArtifactsDir));
    }

    /// <summary>
    /// One reading of a server there after a run: its process tree's CPU (clock ticks) and the sum of its processes' peak resident
    /// memory since the last reading (which resets it), and its own counters (<see cref="ServerStatsWriter"/>), after a pause of two
    /// of their samples so that they hold the run's last work (<paramref name="afterRun"/>). IT4004 when the server is not running
    /// there, IT4017 when the machine cannot be reached.
    /// </summary>
    public async Task<RemoteServerReading> ReadServerAsync(string serverName, string? statsFile, bool afterRun, CancellationToken cancellationToken)
    {
        var outcome = await Machine.RunAsync(["sh", "-c", ReadingScript(PidFile(serverName), statsFile is null ? null : Map(Path.GetFullPath(statsFile)), afterRun)],
            TimeSpan.FromSeconds(30), cancellationToken).ConfigureAwait(false);
        return (outcome.ExitCode == 0 ? RemoteServerReading.Parse(outcome.Output) : null)
               ?? throw new IntegrationException(ErrorCodes.ServerNotRunning,
                   $"{serverName} is not running on {Destination} (its process id is not in {PidFile(serverName)}, or that process has gone): exit {outcome.ExitCode}, {outcome.Errors.Trim()}{outcome.Output.Trim()}");
    }

    /// <summary>Kills a server there, its whole process tree at once (the KillServer fault); returns the id its process had.</summary>
    public async Task<int> KillServerAsync(string serverName, CancellationToken cancellationToken)
    {
        var outcome = await Machine.RunAsync(["sh", "-c", RunningServer(PidFile(serverName)) + TreeFunction
                                                           + "kill -9 $(t $p); echo $p"], TimeSpan.FromSeconds(30), cancellationToken).ConfigureAwait(false);
        return outcome.ExitCode == 0 && int.TryParse(outcome.Output.Trim(), NumberStyles.Integer, CultureInfo.InvariantCulture, out var pid) ? pid
            : throw new IntegrationException(ErrorCodes.ServerNotRunning, $"{serverName} could not be killed on {Destination} (exit {outcome.ExitCode}): {outcome.Errors.Trim()}");
    }

    /// <summary>Where a broker the build started there keeps its process id (as here: StartOwnedBroker's PidFile in the run's logs).</summary>
    public string BrokerPidFile(string broker) => $"{ArtifactsDir}logs/{broker}.broker.pid";

    /// <summary>
    /// Asks a broker the build started there to stop (SIGTERM, its clean shutdown: the RestartBroker fault; the build there starts it
    /// again); returns the id its process had. IT4004 when none of the build's brokers of that name runs there.
    /// </summary>
    public async Task<int> StopBrokerAsync(string broker, CancellationToken cancellationToken)
    {
        // Signalled only while the id is still a process of this run's broker: its working folder or its command line is in the run's folder.
        var pidFile = SshMachine.Quote(BrokerPidFile(broker));
        var outcome = await Machine.RunAsync(["sh", "-c", $"p=$(cat {pidFile} 2>/dev/null); [ -n \"$p\" ] && [ -d /proc/$p ] || exit 3; "
                + $"case \"$(readlink /proc/$p/cwd) $(tr '\\0' ' ' < /proc/$p/cmdline)\" in *{SshMachine.Quote(ArtifactsDir)}*) ;; *) exit 4;; esac; kill -TERM $p && echo $p"],
            TimeSpan.FromSeconds(30), cancellationToken).ConfigureAwait(false);
        return outcome.ExitCode == 0 && int.TryParse(outcome.Output.Trim(), NumberStyles.Integer, CultureInfo.InvariantCulture, out var pid) ? pid
            : throw new IntegrationException(ErrorCodes.ServerNotRunning, $"the {broker} broker could not be stopped on {Destination}: "
                + (outcome.ExitCode switch { 3 => $"no live process id in {BrokerPidFile(broker)}", 4 => "the process id there is no longer this run's broker's", _ => $"exit {outcome.ExitCode}, {outcome.Errors.Trim()}" }));
    }

    /// <summary>
    /// The shell that finds a server there by the id its launch kept ($p), or exits 3: none kept (or kept half-written), gone, or
    /// the id since taken by a process that is not one of the suite's builds — never signalled or read for it.
    /// </summary>
    private static string RunningServer(string pidFile) =>
        "p=$(cat " + SshMachine.Quote(pidFile) + " 2>/dev/null); [ -n \"$p\" ] && [ -d /proc/$p ] && tr '\\0' ' ' < /proc/$p/cmdline | grep -q build.proj || exit 3; ";

    /// <summary>A shell function listing a process and its descendants, parents first (their ids taken before any is signalled).</summary>
    private const string TreeFunction = "t() { echo $1; for c in $(cat /proc/$1/task/*/children 2>/dev/null); do t $c; done; }; ";

    /// <summary>The reading's shell: /proc as ProcessMemory reads it here (utime and stime, VmHWM; clear_refs 5 resets the peak).</summary>
    internal static string ReadingScript(string pidFile, string? statsFile, bool afterRun) =>
        (afterRun ? "sleep 0.2; " : "") + RunningServer(pidFile)
        + TreeFunction + "ticks=0; peak=0; "
        + "for q in $(t $p); do s=$(sed 's/.*) //' /proc/$q/stat 2>/dev/null) || continue; set -- $s; ticks=$((ticks + ${12} + ${13})); "
        + "h=$(awk '/^VmHWM:/ {print $2}' /proc/$q/status 2>/dev/null); peak=$((peak + ${h:-0})); echo 5 > /proc/$q/clear_refs 2>/dev/null; done; "
        + "echo \"pid=$p\"; echo \"ticks=$ticks\"; echo \"hz=$(getconf CLK_TCK)\"; echo \"peak_kb=$peak\""
        + (statsFile is null ? "" : "; printf 'stats='; cat " + SshMachine.Quote(statsFile) + " 2>/dev/null | tr -d '\\n'; echo");
}

/// <summary>What <see cref="MachinePlace.ReadServerAsync"/> read of a server on another machine.</summary>
public sealed record RemoteServerReading(int ProcessId, double CpuSeconds, long PeakBytes, string? StatsJson)
{
    public static RemoteServerReading? Parse(string output)
    {
        var values = output.Split('\n', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries)
            .Select(l => l.Split('=', 2)).Where(p => p.Length == 2).GroupBy(p => p[0]).ToDictionary(g => g.Key, g => g.Last()[1]);
        long Number(string name) => values.TryGetValue(name, out var text) && long.TryParse(text, NumberStyles.Integer, CultureInfo.InvariantCulture, out var n) ? n : -1;
        var (pid, ticks, hz, peak) = (Number("pid"), Number("ticks"), Number("hz"), Number("peak_kb"));
        if (pid <= 0 || ticks < 0 || hz <= 0 || peak < 0)
            return null;
        return new RemoteServerReading((int)pid, ticks / (double)hz, peak * 1024,
            values.TryGetValue("stats", out var stats) && stats.StartsWith('{') ? stats : null);
    }
}
