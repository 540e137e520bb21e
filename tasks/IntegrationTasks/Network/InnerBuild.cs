using IntegrationTasks.Hosting;

namespace IntegrationTasks.Network;

/// <summary>
/// The same entry (RunAll, LatencySweep, Load) run again as a build of its own with the properties its outer build worked out (two
/// hosts' namespaces, a server machine's place), its log forwarded; Ctrl+C here cancels it there.
/// </summary>
internal static class InnerBuild
{
    public static async Task RunAsync(string name, ServerLaunch launch, string? logFile, Microsoft.Build.Utilities.TaskLoggingHelper log, string what, CancellationToken cancellationToken)
    {
        using var child = ServerProcess.Start(name, launch, logFile, ServerLog.To(log, name, MessageImportance.High));
        using var stopOnTermination = BuildTermination.StopOnTermination(() => child.StopAsync(TimeSpan.FromSeconds(1), CancellationToken.None));
        if (!await child.WaitForExitOrCancellationAsync(cancellationToken).ConfigureAwait(false))
        {
            // Ctrl+C: the child build cancels too (SIGINT), stopping its servers; what the outer build made goes when it returns.
            await child.StopAsync(TimeSpan.FromSeconds(1), CancellationToken.None).ConfigureAwait(false);
            cancellationToken.ThrowIfCancellationRequested();
        }
        if (child.ExitCode != 0)
            throw new IntegrationException(ErrorCodes.TransferFailed,
                $"{what} failed (the {name}'s build exited with {child.ExitCode}); its errors are above{(logFile is null ? "" : $", its log in {logFile}")}.");
    }
}
