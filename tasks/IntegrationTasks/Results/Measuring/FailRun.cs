namespace IntegrationTasks.Results;

/// <summary>
/// Fails with a coded error, recorded as the failure of the transport in the build's global properties (as any task's error in a
/// RunAll run is): for a transport that cannot run because something before it failed, so the report names it with a reason.
/// </summary>
public sealed class FailRun : IntegrationTask
{
    [Required] public string Code { get; set; } = "";
    [Required] public string Message { get; set; } = "";

    protected override Task ExecuteAsync(CancellationToken cancellationToken) => throw new IntegrationException(Code, Message);
}
