namespace IntegrationTasks.Hosting;

/// <summary>
/// Says a build is ready (the ready marker, as a server says it) and holds it until its standard input closes or it is cancelled:
/// what keeps a broker the build started on a server machine running for exactly as long as the session that asked for it.
/// </summary>
public sealed class ServeUntilInputCloses : IntegrationTask
{
    /// <summary>What is served, for the ready line (a broker's name).</summary>
    [Required] public string Name { get; set; } = "";

    protected override bool CancellationIsSuccess => true;

    protected override async Task ExecuteAsync(CancellationToken cancellationToken)
    {
        var closed = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        _ = ServerSignals.StopWhenInputClosesAsync(() => closed.TrySetResult());
        Log.LogMessage(MessageImportance.High, "{0}", ServerSignals.ReadyLine($"broker:{Name}", $"{Name}, until this session's input closes"));
        // No timeout of its own: it serves for as long as the session that started it (which has its keep-alives) or until Ctrl+C.
        await closed.Task.WaitAsync(cancellationToken).ConfigureAwait(false);
    }
}
