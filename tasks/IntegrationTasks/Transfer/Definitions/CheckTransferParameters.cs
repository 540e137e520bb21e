namespace IntegrationTasks.Transfer;

/// <summary>
/// What a family may declare of a broker (BrokerDefinition metadata): the seam's vocabulary, one place (a transport's is
/// <see cref="TransportDefinition.Vocabulary"/>). The orchestration reads nothing else, so a name outside these is a misspelling.
/// </summary>
public static class DefinitionMetadata
{
    public static readonly IReadOnlySet<string> Broker = new HashSet<string>(StringComparer.Ordinal)
    {
        "Program", "Elsewhere", "ElsewhereProperty", "Package", "PortProperties", "StartTarget", "StopTarget",
    };

/// <summary>The first definition that declares a name outside <paramref name="known"/>, as a problem naming them; null when none does.</summary>
    public static string? Problem(string kind, IEnumerable<ITaskItem> definitions, IReadOnlySet<string> known) =>
        definitions.Select(d => (d.ItemSpec, Unknown: d.CloneCustomMetadata().Keys.Cast<string>().Where(name => !known.Contains(name)).Order(StringComparer.Ordinal).ToList()))
            .Where(d => d.Unknown.Count > 0)
            .Select(d => $"{kind} {d.ItemSpec} declares {string.Join(", ", d.Unknown)}, which nothing reads (known: {string.Join(", ", known.Order(StringComparer.Ordinal))}).")
            .FirstOrDefault();
}

/// <summary>
/// Every transport's own parameters checked before any run (RunAll and the sweeps): the client and server tasks its definitions name
/// exist and take each parameter given, and the definitions declare only what the orchestration reads, so that a misspelt name
/// fails at once with IT1001 naming the known ones, not at its first run (or never).
/// </summary>
public sealed class CheckTransferParameters : IntegrationTask
{
    /// <summary>TransportDefinition items, each read as a <see cref="TransportDefinition"/>.</summary>
    public ITaskItem[] Transports { get; set; } = [];

    /// <summary>BrokerDefinition items, their metadata checked against <see cref="DefinitionMetadata.Broker"/>.</summary>
    public ITaskItem[] Brokers { get; set; } = [];

    /// <summary>TransportDefinition and ClientDefinition items: ClientTask (else the item's name) and ClientParameters.</summary>
    public ITaskItem[] Clients { get; set; } = [];

    /// <summary>ServerDefinition items: ServerTask (else the item's name) and Parameters.</summary>
    public ITaskItem[] Servers { get; set; } = [];

    protected override Task ExecuteAsync(CancellationToken cancellationToken)
    {
        // A client definition that names no task of its own and gives no parameters may run a target of its own (not RunClient).
        var problems = Clients.Where(c => c.GetMetadata("ClientTask").Length > 0 || c.GetMetadata("ClientParameters").Length > 0)
            .Select(c => TransferTasks.Clients.Problem(TaskName(c, "ClientTask"), Parameters(c, "ClientParameters")))
            .Concat(Servers.Select(s => TransferTasks.Servers.Problem(TaskName(s, "ServerTask"), Parameters(s, "Parameters"))))
            .Concat(TransportDefinition.Problems(Transports))
            .Append(DefinitionMetadata.Problem("BrokerDefinition", Brokers, DefinitionMetadata.Broker))
            .OfType<string>().Distinct().ToList();
        if (problems.Count > 0)
            throw new IntegrationException(ErrorCodes.InvalidParameter, string.Join(" ", problems));
        return Task.CompletedTask;
    }

    private static string TaskName(ITaskItem item, string metadata) => item.GetMetadata(metadata) is { Length: > 0 } name ? name : item.ItemSpec;

    private static string[] Parameters(ITaskItem item, string metadata) => item.GetMetadata(metadata).Split(';');
}
