using System.Reflection;
using System.Runtime.InteropServices;

namespace IntegrationTasks.Common;

/// <summary>
/// SIGTERM to a build that starts servers is taken as Ctrl+C is: MSBuild cancels the build (every running task is told, every
/// server and the broker are stopped as the build ends) and the build fails. Left to .NET's default, SIGTERM ended the process at
/// once with exit code 0, so a script could not tell a terminated run from a finished one.
/// </summary>
public static class BuildTermination
{
    private static readonly Lock Gate = new();
    private static PosixSignalRegistration? _registration;
    private static int _terminated;

    /// <summary>Whether this process was sent SIGTERM while watching for it.</summary>
    public static bool Terminated => Volatile.Read(ref _terminated) == 1;

    /// <summary>Takes SIGTERM over for the rest of this process (once, whoever asks).</summary>
    public static void Watch()
    {
        if (!OperatingSystem.IsLinux() && !OperatingSystem.IsMacOS())
            return;
        lock (Gate)
            _registration ??= PosixSignalRegistration.Create(PosixSignal.SIGTERM, OnTerminate);
    }

    private static void OnTerminate(PosixSignalContext context)
    {
        context.Cancel = true;
        if (Interlocked.Exchange(ref _terminated, 1) == 1)
            return;
        Console.Error.WriteLine(CodedError.Format(ErrorCodes.BuildTerminated,
            "terminated (SIGTERM): the build is cancelled and its servers stopped; its results are incomplete."));
        if (!CancelBuild())
            Environment.Exit(143);
    }

    /// <summary>
    /// What MSBuild's own Ctrl+C handler calls. The engine is MSBuild's and already loaded here; it is reached by name rather than
    /// compiled against, so that the tasks do not pin a second MSBuild version beside the one they run in.
    /// </summary>
    private static bool CancelBuild()
    {
        var engine = AppDomain.CurrentDomain.GetAssemblies().FirstOrDefault(a => a.GetName().Name == "Microsoft.Build");
        var manager = engine?.GetType("Microsoft.Build.Execution.BuildManager");
        var instance = manager?.GetProperty("DefaultBuildManager", BindingFlags.Public | BindingFlags.Static)?.GetValue(null);
        var cancel = manager?.GetMethod("CancelAllSubmissions", BindingFlags.Public | BindingFlags.Instance, Type.EmptyTypes);
        if (instance is null || cancel is null)
            return false;
        // Not on the signal's thread: the cancellation waits for the running tasks, which may need that thread's pool.
        ThreadPool.QueueUserWorkItem(_ => cancel.Invoke(instance, null));
        return true;
    }
}
