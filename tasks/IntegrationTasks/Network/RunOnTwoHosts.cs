using IntegrationTasks.Hosting;

namespace IntegrationTasks.Network;

/// <summary>
/// Runs a target of the suite (RunAll, LatencySweep) on two simulated hosts: makes the two namespaces and their link
/// (<see cref="TwoHosts"/>), runs the same build inside the client's namespace with the servers started inside the
/// server's, forwards its log, and removes the namespaces afterwards — on success, failure and Ctrl+C.
/// </summary>
public sealed class RunOnTwoHosts : IntegrationTask
{
    [Required] public string Project { get; set; } = "";
    [Required] public string Target { get; set; } = "";
    public string Network { get; set; } = "";
    public string LatencyMs { get; set; } = "";
    public string BandwidthMbit { get; set; } = "";

    /// <summary>Both sides' providers: two hosts run on SQLite, each side's database a file of its own.</summary>
    public string ServerProvider { get; set; } = "Sqlite";
    public string ClientProvider { get; set; } = "Sqlite";

    public string? LogFile { get; set; }

    /// <summary>The hosts' own CPUs (<see cref="IntegrationTasks.Network.HostCpus"/>: SERVER/CLIENT or Split); empty: they share every CPU.</summary>
    public string HostCpus { get; set; } = "";

    /// <summary>Where the inner build's global properties are written for it, owner-only (never on its command line).</summary>
    [Required] public string PropertiesFile { get; set; } = "";

    protected override async Task ExecuteAsync(CancellationToken cancellationToken)
    {
        var profile = NetworkProfile.Parse(Network, LatencyMs, BandwidthMbit);
        if (Data.DatabaseProviders.Parse(ServerProvider) != Data.DatabaseProvider.Sqlite || Data.DatabaseProviders.Parse(ClientProvider) != Data.DatabaseProvider.Sqlite)
            throw new IntegrationException(ErrorCodes.InvalidParameter,
                "Hosts=Two runs on SQLite (each side's database is a file of its own); a database server would have to run inside the server's namespace.");
        var cpus = IntegrationTasks.Network.HostCpus.Parse(HostCpus, Environment.ProcessorCount);
        await using var hosts = await TwoHosts.CreateAsync(Environment.ProcessId, profile.BandwidthMbit, EventLog, cancellationToken).ConfigureAwait(false);
        // Made after the namespaces and so removed before them: the groups are empty once the client host's build has ended.
        await using var cpuSets = cpus is null ? null
            : HostCpuSets.Create(Environment.ProcessId, cpus, Path.GetDirectoryName(Path.GetFullPath(PropertiesFile))!, EventLog);
        // Each process joins its host's CPUs before it enters the host's namespace: it never runs a moment on the other's.
        string[] serverPrefix = [.. cpuSets is null ? [] : new[] { cpuSets.ServerJoin }, .. TwoHosts.Exec(hosts.ServerNamespace)];
        string[] clientPrefix = [.. cpuSets is null ? [] : new[] { cpuSets.ClientJoin }, .. TwoHosts.Exec(hosts.ClientNamespace)];
        // The link once, before anything runs on it: what every figure of the run stands on.
        var link = await LinkProbe.MeasureAsync(hosts.ServerNamespace, hosts.ClientNamespace, TwoHosts.ClientAddress, cancellationToken).ConfigureAwait(false);
        Log.LogMessage(MessageImportance.High, "Two hosts: the link measured, {0}.", link);
        var properties = new Dictionary<string, string>(BuildEngine6.GetGlobalProperties(), StringComparer.OrdinalIgnoreCase)
        {
            ["Hosts"] = "Two",
            ["_InsideClientHost"] = "true",
            ["HostName"] = TwoHosts.ServerAddress,
            ["BindAddress"] = TwoHosts.ServerAddress,
            ["ServerCommandPrefix"] = string.Join(' ', serverPrefix),
            ["HostCpus"] = cpus?.ToString() ?? "",
            ["HostCpusDescription"] = cpuSets?.Description ?? "",
            ["HostsLink"] = link.ToString(),
        };
        var launch = ServerLaunch.ForTarget(Project, Target, properties, PropertiesFile).WithPrefix(clientPrefix);
        Log.LogMessage(MessageImportance.High, "Two hosts: running {0} on the client host ({1}); servers on the server host ({2}, {3}); {4}{5}.",
            Target, hosts.ClientNamespace, hosts.ServerNamespace, TwoHosts.ServerAddress, profile.Describe(), cpuSets is null ? "; every CPU shared" : $"; {cpuSets.Description}");
        await InnerBuild.RunAsync("client host", launch, LogFile, Log, $"{Target} on two hosts", cancellationToken).ConfigureAwait(false);
    }
}
