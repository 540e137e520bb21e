using System.Reflection;
using System.Runtime.InteropServices;

namespace IntegrationTasks.Common;

/// <summary>
/// SIGTERM or SIGHUP to a build that starts servers is taken as Ctrl+C is: MSBuild cancels the build (every running task is told, every
/// server and the broker are stopped as the build ends) and the process ends with exit code 128 + the signal (143, 129). Left to .NET's
/// default, SIGTERM ended the process with exit code 0, so a script could not tell a terminated run from a finished one; and SIGHUP
/// killed it at once, leaving a broker that was still starting (not yet registered for its stop) running.
/// </summary>
public static class BuildTermination
{
    /// <summary>The exit code of a build ended by SIGTERM (128 + 15).</summary>
    public const int ExitCode = 143;

    /// <summary>The exit code of a build ended by SIGHUP (128 + 1): its terminal or session went away.</summary>
    public const int HangUpExitCode = 129;

    private static readonly Lock Gate = new();
    private static readonly List<Func<Task>> Stops = [];
    private static PosixSignalRegistration[] _registrations = [];
    private static int _terminated;
    private static int _exitCode = ExitCode;

    /// <summary>The longest the way out waits for the servers to stop.</summary>
    public static readonly TimeSpan StopTimeout = TimeSpan.FromSeconds(30);

    /// <summary>
    /// Something this build started that must be stopped if SIGTERM ends it: MSBuild's cancellation may end the process before the
    /// build's own teardown has run. A stop that fails (already stopped, already disposed) is ignored.
    /// </summary>
    public static IDisposable StopOnTermination(Func<Task> stop)
    {
        lock (Gate)
            Stops.Add(stop);
        return new Registration(stop);
    }

    /// <summary>Disposed once what it stops has stopped by itself (a client process per run: the list must not grow with the runs).</summary>
    private sealed class Registration(Func<Task> stop) : IDisposable
    {
        public void Dispose()
        {
            lock (Gate)
                Stops.Remove(stop);
        }
    }

    /// <summary>Takes SIGTERM and SIGHUP over for the rest of this process (once, whoever asks).</summary>
    public static void Watch()
    {
        if (!OperatingSystem.IsLinux() && !OperatingSystem.IsMacOS())
            return;
        lock (Gate)
        {
            if (_registrations.Length > 0)
                return;
            _registrations = [PosixSignalRegistration.Create(PosixSignal.SIGTERM, OnTerminate), PosixSignalRegistration.Create(PosixSignal.SIGHUP, OnTerminate)];
            AppDomain.CurrentDomain.ProcessExit += (_, _) =>
            {
                if (Volatile.Read(ref _terminated) != 1)
                    return;
                StopAll();
                // MSBuild ends a cancelled build with 0 or 1 depending on when the cancellation landed, and through Environment.Exit,
                // whose code no later setting changes: leave with the signal's code directly, now that the servers are stopped.
                try
                {
                    Console.Out.Flush();
                    Console.Error.Flush();
                }
                catch (IOException)
                {
                    // Nowhere to write (the terminal is gone): the exit code still says how the build ended.
                }
                ExitNow(Volatile.Read(ref _exitCode));
            };
        }
    }

    private static void OnTerminate(PosixSignalContext context)
    {
        if (Interlocked.Exchange(ref _terminated, 1) == 1)
        {
            // A second SIGTERM gets the default (the process ends, through ProcessExit and its stops). A second SIGHUP would kill it
            // outright, servers left running — a closing terminal often sends two —, so the cancellation under way goes on.
            context.Cancel = context.Signal == PosixSignal.SIGHUP;
            return;
        }
        var (name, code) = context.Signal == PosixSignal.SIGHUP ? ("SIGHUP", HangUpExitCode) : ("SIGTERM", ExitCode);
        Volatile.Write(ref _exitCode, code);
        // Without a build to cancel, the default goes on, after every other handler (the broker's stop among them).
        context.Cancel = CancelBuild();
        try
        {
            Console.Error.WriteLine(CodedError.Format(ErrorCodes.BuildTerminated,
                $"terminated ({name}): the build is cancelled and its servers stopped; its results are incomplete (exit code {code})."));
        }
        catch (IOException)
        {
            // A terminal that hung up takes no more output; the build is cancelled all the same.
        }
    }

    [DllImport("libc", EntryPoint = "_exit")]
    private static extern void ExitNow(int status);

    private static void StopAll()
    {
        Func<Task>[] stops;
        lock (Gate)
            stops = [.. Stops];
        var stopping = stops.Select(async stop =>
        {
            try
            {
                await stop().ConfigureAwait(false);
            }
            catch (Exception e) when (e is not OutOfMemoryException)
            {
                // Whatever a stop failed with (a server already gone, a broker's own coded error), the way out goes on: the others
                // are still stopped and the exit code is still the terminated build's.
            }
        });
        // ProcessExit runs its handlers synchronously, and the process ends when they return.
        Task.WhenAll(stopping).Wait(StopTimeout);
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
        // Not on the signal's thread: the cancellation waits for the running tasks. A failure leaves the process to end at once.
        ThreadPool.QueueUserWorkItem(_ =>
        {
            try
            {
                cancel.Invoke(instance, null);
            }
            catch (TargetInvocationException)
            {
                Environment.Exit(Volatile.Read(ref _exitCode));
            }
        });
        return true;
    }
}
