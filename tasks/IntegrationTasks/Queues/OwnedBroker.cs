using IntegrationTasks.Common;
using Microsoft.Build.Framework;
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
    private readonly Func<CancellationToken, Task> _stop;
    private readonly Lock _gate = new();
    private Task? _stopping;

    public OwnedBroker(int processId, Func<CancellationToken, Task> stop)
    {
        ProcessId = processId;
        _stop = stop;
        _terminated = OperatingSystem.IsLinux() || OperatingSystem.IsMacOS()
            ? [PosixSignalRegistration.Create(PosixSignal.SIGTERM, _ => Dispose()), PosixSignalRegistration.Create(PosixSignal.SIGHUP, _ => Dispose())]
            : [];
    }

    public int ProcessId { get; }

    /// <summary>
    /// The one stop, awaited by every caller: a build terminated with SIGTERM stops the broker from the signal's thread, the client
    /// then fails fast and the build ends and disposes this — returning at once there let the process exit while the signal's thread
    /// still waited (RabbitMQ's epmd was left running).
    /// </summary>
    public Task StopAsync(CancellationToken cancellationToken)
    {
        lock (_gate)
            return _stopping ??= StopOnceAsync(cancellationToken);
    }

    private async Task StopOnceAsync(CancellationToken cancellationToken)
    {
        foreach (var registration in _terminated)
            registration?.Dispose();
        await _stop(cancellationToken).ConfigureAwait(false);
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

    public void Dispose() => StopAsync(CancellationToken.None).GetAwaiter().GetResult();
}

/// <summary>Stops the broker this build started and registered under <paramref name="registrationKey"/>; none is not an error.</summary>
public abstract class StopOwnedBroker(string registrationKey, string brokerName) : IntegrationTask
{
    protected override async Task ExecuteAsync(CancellationToken cancellationToken)
    {
        if (BuildEngine4.UnregisterTaskObject(registrationKey, RegisteredTaskObjectLifetime.Build) is not OwnedBroker broker)
            return;
        await broker.StopAsync(cancellationToken).ConfigureAwait(false);
        Log.LogMessage(MessageImportance.High, "{0} stopped.", brokerName);
    }
}
