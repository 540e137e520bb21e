using IntegrationTasks.Hosting.Remote;

namespace IntegrationTasks.Network;

/// <summary>
/// Brings the suite to the machines a run will use over ssh (<see cref="SshMachine"/>): first looks at every one and stops with
/// one IT4019 naming what each lacks, then places this version of the suite in each (<see cref="SuiteDeployment"/>), reusing a
/// copy already there. Nothing is installed on them: what is missing is named with its package.
/// </summary>
public sealed class DeploySuite : MachinesTask
{
    /// <summary>The programs the server machine needs (item spec = a name; metadata Program, Package): the brokers the run starts there.</summary>
    public ITaskItem[] ServerRequirements { get; set; } = [];

    /// <summary>Each machine's copy, <c>destination=folder</c>, in the order given (the server machine first).</summary>
    [Output] public string[] Deployed { get; private set; } = [];

    protected override async Task ExecuteAsync(CancellationToken cancellationToken)
    {
        var (server, clients) = Machines();
        var required = ServerRequirements.Select(r => new RemoteRequirement(r.ItemSpec, r.GetMetadata("Program"), r.GetMetadata("Package"))).ToList();
        var machines = new[] { (Machine: server, Required: (IReadOnlyList<RemoteRequirement>)required) }
            .Concat(clients.Select(c => (Machine: c, Required: (IReadOnlyList<RemoteRequirement>)[]))).ToList();
        var placed = await PlaceAsync(machines, Root, Configuration, RemoteFolder, Log, cancellationToken).ConfigureAwait(false);
        var deployed = placed.Select(p => $"{p.Machine.Destination}={p.Folder}").ToList();
        Deployed = [.. deployed];
    }

    /// <summary>
    /// Looks at every machine first and stops with one IT4019 naming what each lacks; then places this version of the suite on each
    /// (reusing a copy already there). Returns each machine with what was found there and its copy's folder.
    /// </summary>
    internal static async Task<IReadOnlyList<(SshMachine Machine, MachineFacts Facts, string Folder)>> PlaceAsync(
        IReadOnlyList<(SshMachine Machine, IReadOnlyList<RemoteRequirement> Required)> machines, string root, string configuration, string remoteFolder,
        Microsoft.Build.Utilities.TaskLoggingHelper log, CancellationToken cancellationToken)
    {
        if (remoteFolder.Trim() is var remote && (remote.Length == 0 || remote.Contains("..", StringComparison.Ordinal) || remote[0] is '-' or '~'))
            throw new IntegrationException(ErrorCodes.InvalidParameter,
                $"RemoteFolder names a folder on each machine, relative to the user's home there or absolute, without '..' and not starting with '-' or '~' (was '{remoteFolder}').");
        // Every machine looked at before anything is sent: one error lists all that is missing, machine by machine.
        var lacking = new List<string>();
        var found = new List<MachineFacts>();
        foreach (var (machine, needs) in machines)
        {
            var facts = await MachineFacts.OfAsync(machine, needs, cancellationToken).ConfigureAwait(false);
            found.Add(facts);
            log.LogMessage(MessageImportance.High, "{0}: {1}; .NET SDK {2}; {3}{4}.", machine.Destination, facts.Describe(),
                facts.Sdks.Count == 0 ? "none" : string.Join(", ", facts.Sdks), facts.Root ? "root" : "not root",
                needs.Count == 0 ? "" : "; " + string.Join(", ", needs.Select(n => $"{n.Name} {(facts.Programs.Contains(n.Program) ? "present" : "missing")}")));
            if (facts.Missing(needs, needsRoot: false) is { Count: > 0 } missing)
                lacking.Add($"{machine.Destination} lacks {string.Join("; ", missing)}");
        }
        if (lacking.Count > 0)
            throw new IntegrationException(ErrorCodes.RemotePrerequisiteMissing, $"Not every machine can run its part: {string.Join(". ", lacking)}.");

        var suite = SuiteDeployment.Of(root, configuration);
        var placed = new List<(SshMachine, MachineFacts, string)>();
        foreach (var ((machine, _), facts) in machines.Zip(found))
        {
            var (folder, sent) = await suite.EnsureOnAsync(machine, remote, TimeSpan.FromMinutes(10), cancellationToken).ConfigureAwait(false);
            log.LogMessage(MessageImportance.High, "{0}: {1} in {2} ({3}).", machine.Destination, suite, folder, sent ? "sent" : "already there, unchanged");
            placed.Add((machine, facts, folder));
        }
        return placed;
    }
}
