namespace IntegrationTasks.Hosting;

/// <summary>
/// A service driven by a script with <c>status</c>, <c>start</c> and <c>stop</c> commands (scripts/postgres.sh):
/// started only when it is not running, and stopped on disposal only if it was started here — so a
/// target never stops what it found running, and never leaves behind what it started.
/// </summary>
public sealed class ScriptedService(string script, string name, string output, bool startedHere, IEventLog log) : IAsyncDisposable
{
    private static readonly TimeSpan CommandTimeout = TimeSpan.FromMinutes(5);

    public string Name => name;

    /// <summary>The last line the script printed for status or start (for postgres.sh: the connection string).</summary>
    public string Output => output;

    public bool StartedHere => startedHere;

    public static async Task<ScriptedService> EnsureRunningAsync(string script, string name, IEventLog log, CancellationToken cancellationToken)
    {
        var status = await RunAsync(script, "status", cancellationToken).ConfigureAwait(false);
        if (status.ExitCode == 0)
        {
            log.Detail($"{name} is already running; it is left running afterwards.");
            return new ScriptedService(script, name, LastLine(status.Output), startedHere: false, log);
        }
        var start = await RunAsync(script, "start", cancellationToken).ConfigureAwait(false);
        if (start.ExitCode != 0)
            throw new IntegrationException(ErrorCodes.ServiceUnavailable, $"Could not start {name} ({script} start, exit code {start.ExitCode}): {start.Errors.Trim()}");
        var service = new ScriptedService(script, name, LastLine(start.Output), startedHere: true, log);
        log.Info($"Started {name}; it is stopped again when this target ends.");
        return service;
    }

    public async ValueTask DisposeAsync()
    {
        if (!StartedHere)
            return;
        // Also on failure and Ctrl+C: the stop must run to its end, so it is not cancelled.
        var stop = await RunAsync(script, "stop", CancellationToken.None).ConfigureAwait(false);
        if (stop.ExitCode == 0)
            log.Info($"Stopped {Name}, which this target had started.");
        else
            log.Warning(ErrorCodes.ServiceUnavailable, $"Could not stop {Name} ({script} stop, exit code {stop.ExitCode}): {stop.Errors.Trim()}");
    }

    private static Task<ExternalCommand.Outcome> RunAsync(string script, string command, CancellationToken cancellationToken) =>
        ExternalCommand.RunAsync("bash", [script, command], CommandTimeout, cancellationToken);

    private static string LastLine(string output) =>
        output.Split('\n', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries).LastOrDefault() ?? "";
}
