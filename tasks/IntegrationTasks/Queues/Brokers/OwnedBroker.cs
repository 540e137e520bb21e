using IntegrationTasks.Hosting;
using System.Runtime.InteropServices;

namespace IntegrationTasks.Queues;

/// <summary>
/// A broker process the build started, registered with MSBuild so that it is stopped once whatever ends the build: its stop task,
/// the end of the build (MSBuild disposes what is registered), SIGTERM or SIGHUP (brokers do not watch their input as the suite's
/// servers do, so a killed build would otherwise leave them running). Every caller awaits the one stop.
/// </summary>
internal sealed class OwnedBroker : IDisposable
{
    private readonly PosixSignalRegistration?[] _terminated;
    private readonly ServerProcess _process;
    private readonly Func<CancellationToken, Task> _stop;
    private readonly Lock _gate = new();
    private Task? _stopping;
    private readonly string? _pidFile;
    private readonly CancellationTokenSource _stopWatching = new();

    /// <summary>The key a broker of this name is registered under for the build.</summary>
    public static string RegistrationKey(string brokerName) => $"IntegrationTasks.Broker/{brokerName}";

    public OwnedBroker(ServerProcess process, Func<CancellationToken, Task> stop, string? pidFile = null)
    {
        _process = process;
        _stop = stop;
        _pidFile = string.IsNullOrEmpty(pidFile) ? null : Path.GetFullPath(pidFile);
        if (_pidFile is not null)
        {
            Directory.CreateDirectory(Path.GetDirectoryName(_pidFile)!);
            process.PidFile = _pidFile; // written again at each start after an exit (RestartOnExit)
        }
        _terminated = OperatingSystem.IsLinux() || OperatingSystem.IsMacOS()
            ? [PosixSignalRegistration.Create(PosixSignal.SIGTERM, _ => Dispose()), PosixSignalRegistration.Create(PosixSignal.SIGHUP, _ => Dispose())]
            : [];
        // The signals' handlers stop the brokers one after another on one thread; a build cancelled by SIGTERM may reach its exit
        // before the last of them has run, so the way out waits for every broker's stop too (each stop runs once, whoever asks).
        BuildTermination.StopOnTermination(() => StopAsync(CancellationToken.None));
        // A broker started in one of MSBuild's worker nodes is not reached by a signal sent to the build: the node ends when the build's
        // process is gone, and stops it on its way out — but only once the task it is running has finished, which under load took
        // minutes. So the node also watches the build's process and stops the broker as soon as that is gone.
        AppDomain.CurrentDomain.ProcessExit += StopOnExit;
        if (BuildProcessOfThisNode() is { } build)
            _ = StopWhenGoneAsync(build);
    }

    /// <summary>The build's own process when this is one of MSBuild's worker nodes (started with /nodemode, a child of the build); else null.</summary>
    private static System.Diagnostics.Process? BuildProcessOfThisNode()
    {
        if (!OperatingSystem.IsLinux() || !Environment.GetCommandLineArgs().Any(a => a.Contains("nodemode:", StringComparison.OrdinalIgnoreCase)))
            return null;
        try
        {
            return ProcessTree.ParentOf("/proc/self") is > 1 and var parent ? System.Diagnostics.Process.GetProcessById(parent) : null;
        }
        catch (Exception e) when (e is ArgumentException or InvalidOperationException)
        {
            return null;
        }
    }

    private async Task StopWhenGoneAsync(System.Diagnostics.Process build)
    {
        using (build)
        {
            try
            {
                await build.WaitForExitAsync(_stopWatching.Token).ConfigureAwait(false);
            }
            catch (Exception e) when (e is InvalidOperationException or OperationCanceledException)
            {
                // Stopped otherwise meanwhile, or not a process this one may wait for (the node's own exit stops the broker).
                return;
            }
        }
        Dispose();
    }

    private void StopOnExit(object? sender, EventArgs e) => Dispose();

    /// <summary>Its current process (another after a restart); 0 once stopped and released.</summary>
    public int ProcessId
    {
        get
        {
            try
            {
                return _process.ProcessId;
            }
            catch (InvalidOperationException)
            {
                return 0;
            }
        }
    }

    /// <summary>Returns once it runs and is ready: at once, or once it is back after an exit it is being started again from.</summary>
    public Task WhenRunningAsync(TimeSpan timeout, CancellationToken cancellationToken) => _process.WhenRunningAsync(timeout, cancellationToken);

    /// <summary>
    /// The one stop, awaited by every caller: a build terminated with SIGTERM stops the broker from the signal's thread, the client
    /// then fails fast and the build ends and disposes this — returning at once there let the process exit while the signal's thread
    /// still waited (RabbitMQ's epmd was left running).
    /// </summary>
    public Task StopAsync(CancellationToken cancellationToken)
    {
        // The stop itself is never cancelled (a caller's Ctrl+C must not leave the broker half stopped); a caller may stop waiting.
        lock (_gate)
            return (_stopping ??= StopOnceAsync()).WaitAsync(cancellationToken);
    }

    private async Task StopOnceAsync()
    {
        foreach (var registration in _terminated)
            registration?.Dispose();
        AppDomain.CurrentDomain.ProcessExit -= StopOnExit;
        await _stopWatching.CancelAsync().ConfigureAwait(false);
        // Gone first: a run that reads it meters no process that might take the pid after.
        try
        {
            await _stop(CancellationToken.None).ConfigureAwait(false);
        }
        finally
        {
            // After the stop (a restart under way would write it again), and also when the stop failed: no run may take it for a broker.
            if (_pidFile is not null)
                File.Delete(_pidFile);
        }
    }

    /// <summary>Build teardown or a signal's thread: a failed stop is not thrown there (it would end the process before the other brokers' stops).</summary>
    public void Dispose()
    {
        try
        {
            StopAsync(CancellationToken.None).GetAwaiter().GetResult();
        }
        catch (Exception e) when (e is not OutOfMemoryException)
        {
            Console.Error.WriteLine($"{ErrorCodes.Unexpected}: a broker (process {ProcessId}) did not stop cleanly: {e.Message}");
        }
    }

    /// <summary>
    /// A broker run by hand until Ctrl+C (its target's WaitUntilCancelled): waits for the cancellation, then unregisters and stops
    /// it, and says so.
    /// </summary>
    public async Task ServeUntilCancelledAsync(IBuildEngine4 engine, string registrationKey, Action stopped, CancellationToken cancellationToken)
    {
        try
        {
            await Task.Delay(Timeout.Infinite, cancellationToken).ConfigureAwait(false);
        }
        finally
        {
            engine.UnregisterTaskObject(registrationKey, RegisteredTaskObjectLifetime.Build);
            await StopAsync(CancellationToken.None).ConfigureAwait(false);
            stopped();
        }
    }

}

/// <summary>Stops the broker of this name this build started and registered; none is not an error.</summary>
public abstract class StopOwnedBroker(string brokerName) : IntegrationTask
{
    protected override async Task ExecuteAsync(CancellationToken cancellationToken)
    {
        if (BuildEngine4.UnregisterTaskObject(OwnedBroker.RegistrationKey(brokerName), RegisteredTaskObjectLifetime.Build) is not OwnedBroker broker)
            return;
        await broker.StopAsync(cancellationToken).ConfigureAwait(false);
        Log.LogMessage(MessageImportance.High, "{0} stopped.", brokerName);
    }
}

/// <summary>
/// Starts a broker this build owns (RabbitMQ's node, nats-server, redis-server) and returns once it is ready. It stays registered
/// under its name for the rest of the build (<see cref="OwnedBroker"/>); a second start in the same build
/// reuses it. With <see cref="WaitUntilCancelled"/> (its broker target, run by hand) it serves in the foreground until Ctrl+C.
/// </summary>
public abstract class StartOwnedBroker(string brokerName) : IntegrationTask
{
    private readonly string registrationKey = OwnedBroker.RegistrationKey(brokerName);

    /// <summary>Its folder: configuration, log and data.</summary>
    [Required] public string Directory { get; set; } = "";

    /// <summary>Where it listens (the server host's address on two hosts).</summary>
    public string BindAddress { get; set; } = SettingDefaults.BindAddress;

    /// <summary>A command the broker runs through, words separated by spaces (<c>ip netns exec NAME</c> on two hosts).</summary>
    public string CommandPrefix { get; set; } = "";
    public int ReadyTimeoutSeconds { get; set; } = 120;

    /// <summary>Run in the foreground until Ctrl+C, then stop the broker (its broker target, for use by hand).</summary>
    public bool WaitUntilCancelled { get; set; }

    /// <summary>
    /// The broker's user and password (<see cref="BrokerCredentials"/>), made there when missing; empty: none, which only a broker on
    /// loopback may run with.
    /// </summary>
    public string CredentialsFile { get; set; } = "";

    /// <summary>What the broker takes as its only user; null: it stays open as on loopback (RabbitMQ's guest only from loopback).</summary>
    protected BrokerCredentials? Credentials { get; private set; }

    /// <summary>The build's Tls (false, true, false+true): the broker listens over TLS, plaintext, or both.</summary>
    public string Tls { get; set; } = "false";

    /// <summary>Where the suite's authority and the server certificate are (made there when missing).</summary>
    public string TlsFolder { get; set; } = "";

    /// <summary>Mutual TLS: the broker's TLS listener takes only clients presenting a certificate from the authority in TlsFolder.</summary>
    public bool ClientCertificates { get; set; }

    /// <summary>Its listeners and certificate, from <see cref="Tls"/>.</summary>
    protected BrokerTls Listeners { get; private set; } = BrokerTls.None;

    [Output] public int ProcessId { get; private set; }

    /// <summary>Where its process id is kept while it runs (a run's client meters the broker by it, the RestartBroker fault signals it); none when empty.</summary>
    public string PidFile { get; set; } = "";

    /// <summary>Start it again whenever it exits without being stopped (the RestartBroker fault), as a service manager would.</summary>
    public bool RestartOnExit { get; set; }

    protected override bool CancellationIsSuccess => WaitUntilCancelled;

    /// <summary>The port its clients connect to, checked free before it starts (not through a command prefix: another namespace's).</summary>
    protected abstract int ClientPort { get; }

    /// <summary>
    /// Starts the broker and waits until it is ready: its process (one that takes SIGTERM as a clean stop), how to stop it once, and
    /// where it listens.
    /// </summary>
    protected abstract Task<(ServerProcess Process, Func<CancellationToken, Task> Stop, string Endpoint)> StartBrokerAsync(Action<string> log, TimeSpan readyTimeout,
        CancellationToken cancellationToken);

    /// <summary>"127.0.0.1:6380", "127.0.0.1:6381 (TLS)" or both: where a broker with a TLS port of its own listens.</summary>
    protected string Listening(int port, int tlsPort)
    {
        var tls = FormattableString.Invariant($"{BindAddress}:{tlsPort} (TLS)");
        var plain = FormattableString.Invariant($"{BindAddress}:{port}");
        return !Listeners.Encrypted ? plain : Listeners.Plaintext ? $"{plain} and {tls}" : tls;
    }

    /// <summary>Its settings checked before anything else (an IntegrationException with its code).</summary>
    protected virtual void Validate()
    {
    }

    protected override async Task ExecuteAsync(CancellationToken cancellationToken)
    {
        Validate();
        Credentials = BrokerCredentials.ForBroker(brokerName, BindAddress, CredentialsFile);
        Listeners = BrokerTls.For(Tls, TlsFolder, BindAddress, ClientCertificates);
        // A broker for a build's runs (not one started by hand to serve until stopped): SIGTERM fails that build.
        if (!WaitUntilCancelled)
            BuildTermination.Watch();
        if (BuildEngine4.GetRegisteredTaskObject(registrationKey, RegisteredTaskObjectLifetime.Build) is OwnedBroker running)
        {
            ProcessId = running.ProcessId;
            Log.LogMessage(MessageImportance.High, "{0} is already running for this build (process {1}).", brokerName, ProcessId);
            return;
        }
        if (ServerLaunch.Words(CommandPrefix).Count == 0)
            Ports.EnsureFree(BindAddress, ClientPort);
        var (process, stop, endpoint) = await StartBrokerAsync(ServerLog.To(Log, brokerName), TimeSpan.FromSeconds(ReadyTimeoutSeconds), cancellationToken)
            .ConfigureAwait(false);
        process.RestartReadyTimeout = TimeSpan.FromSeconds(ReadyTimeoutSeconds);
        process.RestartOnExit = RestartOnExit;
        var broker = new OwnedBroker(process, stop, PidFile);
        ProcessId = broker.ProcessId;
        // This task ends before the broker does: its later lines (a restart's) wait in the process's log, not on a finished task's logger.
        if (!WaitUntilCancelled)
            process.AttachLog(null);
        BuildEngine4.RegisterTaskObject(registrationKey, broker, RegisteredTaskObjectLifetime.Build, allowEarlyCollection: false);
        Log.LogMessage(MessageImportance.High, "{0} is ready on {1} ({2}).", brokerName, endpoint,
            (Credentials is null ? "no credentials: loopback only" : $"{Credentials} only, from {Path.GetFullPath(CredentialsFile)}")
            + (Listeners.Encrypted ? Listeners.Plaintext ? "; plaintext and TLS" : "; TLS only" : ""));
        if (WaitUntilCancelled)
            await broker.ServeUntilCancelledAsync(BuildEngine4, registrationKey, () => Log.LogMessage(MessageImportance.High, "{0} stopped.", brokerName),
                cancellationToken).ConfigureAwait(false);
    }
}

/// <summary>
/// Waits until the broker of this name this build started runs and is ready: after the RestartBroker fault it is being started again,
/// and the next run must not begin before it is back. None started is not an error (another's broker, or none needed).
/// </summary>
public sealed class WaitForOwnedBroker : IntegrationTask
{
    /// <summary>The broker's name (a TransportDefinition's Broker: RabbitMQ, NATS, Redis).</summary>
    [Required] public string Name { get; set; } = "";
    public int ReadyTimeoutSeconds { get; set; } = 120;

    protected override async Task ExecuteAsync(CancellationToken cancellationToken)
    {
        if (BuildEngine4.GetRegisteredTaskObject(OwnedBroker.RegistrationKey(Name), RegisteredTaskObjectLifetime.Build) is OwnedBroker broker)
            await broker.WhenRunningAsync(TimeSpan.FromSeconds(ReadyTimeoutSeconds), cancellationToken).ConfigureAwait(false);
    }
}
