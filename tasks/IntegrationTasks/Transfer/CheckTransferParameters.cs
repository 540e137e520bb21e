using IntegrationTasks.Common;
using Microsoft.Build.Framework;

namespace IntegrationTasks.Transfer;

/// <summary>
/// Every transport's own parameters checked before any run (RunAll, Load): the client and server tasks its definitions name exist
/// and take each parameter given, so that a misspelt one fails at once with IT1001 naming the known ones, not at its first run.
/// </summary>
public sealed class CheckTransferParameters : IntegrationTask
{
    /// <summary>TransportDefinition and ClientDefinition items: ClientTask (else the item's name) and ClientParameters.</summary>
    public ITaskItem[] Clients { get; set; } = [];

    /// <summary>ServerDefinition items: ServerTask (else the item's name) and Parameters.</summary>
    public ITaskItem[] Servers { get; set; } = [];

    protected override Task ExecuteAsync(CancellationToken cancellationToken)
    {
        // A client definition that names no task of its own and gives no parameters may run a target of its own (not RunClient).
        var problems = Clients.Where(c => c.GetMetadata("ClientTask").Length > 0 || c.GetMetadata("ClientParameters").Length > 0)
            .Select(c => NamedTransferTask<TransferClientTask>.Problem(TaskName(c, "ClientTask"), Parameters(c, "ClientParameters")))
            .Concat(Servers.Select(s => NamedTransferTask<TransferServerTask>.Problem(TaskName(s, "ServerTask"), Parameters(s, "Parameters"))))
            .OfType<string>().Distinct().ToList();
        if (problems.Count > 0)
            throw new IntegrationException(ErrorCodes.InvalidParameter, string.Join(" ", problems));
        return Task.CompletedTask;
    }

    private static string TaskName(ITaskItem item, string metadata) => item.GetMetadata(metadata) is { Length: > 0 } name ? name : item.ItemSpec;

    private static string[] Parameters(ITaskItem item, string metadata) => item.GetMetadata(metadata).Split(';');
}
