using System.Runtime.InteropServices;
using IntegrationTasks.Data;
using IntegrationTasks.Hosting;

namespace IntegrationTasks.Transfer;

/// <summary>
/// What every server task shares: the server database, the readiness line the hosting layer waits
/// for, and the ways to stop — Ctrl+C (MSBuild cancels the task) or, when started by the suite,
/// the parent closing our standard input (which also happens if the parent dies).
/// </summary>
public abstract class TransferServerTask : IntegrationTask
{
    public string ServerProvider { get; set; } = "Sqlite";

    [Required]
    public string ServerConnString { get; set; } = "";

    /// <summary>PerRecord (one SELECT per ID, the series' scenario and the default) or Range (one range query per batch).</summary>
    public string ServerWork { get; set; } = nameof(Data.ServerWork.PerRecord);

    /// <summary>Stop when standard input reaches end of file (set by the suite's StartServer).</summary>
    public bool StopOnStdinClose { get; set; }

    /// <summary>
    /// Started by a person: Ctrl+C (MSBuild cancels the task) or SIGTERM stops the server cleanly and ends the process with exit code 0 —
    /// MSBuild itself ends any cancelled build with 1 ("Build failed"), which is wrong for the documented way to stop a server.
    /// </summary>
    public bool ExitOnInterrupt { get; set; }

    /// <summary>Where to report the server's own counters for the orchestrator (set by RunAll); nothing when empty.</summary>
    public string? StatsFile { get; set; }

    /// <summary>False for a task whose server is another process (HttpServer): that process reports instead.</summary>
    protected virtual bool ReportsOwnStats => true;

    /// <summary>Requests waiting for the server now, for a server that can tell (its broker queue, its inbox); null otherwise.</summary>
    protected virtual long? RequestsWaiting => null;

    protected override bool CancellationIsSuccess => true;

    /// <summary>What its lines call the server: its class's name (TcpServer2), or an external transport's server's own.</summary>
    protected virtual string ServerName => GetType().Name;

    protected Database OpenDatabase() => Database.Create(ServerProvider, ServerConnString);

    /// <summary>Binds (so that a taken port fails here), then returns the endpoint and the serving loop.</summary>
    protected abstract Task<(string Endpoint, Func<CancellationToken, Task> Serve)> StartAsync(RecordSource source, CancellationToken cancellationToken);

    protected override async Task ExecuteAsync(CancellationToken cancellationToken)
    {
        var work = ServerWorks.Parse(ServerWork);
        var database = OpenDatabase();
        await database.EnsureSchemaAsync(cancellationToken).ConfigureAwait(false);
        var (endpoint, serve) = await StartAsync(new RecordSource(database, work), cancellationToken).ConfigureAwait(false);
        using var stop = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        if (StopOnStdinClose)
            _ = ServerSignals.StopWhenInputClosesAsync(stop.Cancel);
        var terminated = false;
        using var sigterm = ExitOnInterrupt
            ? PosixSignalRegistration.Create(PosixSignal.SIGTERM, context => { context.Cancel = true; terminated = true; stop.Cancel(); })
            : null;
        Log.LogMessage(MessageImportance.High, "{0}", ServerSignals.ReadyLine(endpoint, $"{ServerName}, {work}, {database.Describe()}"));
        if (ExitOnInterrupt)
            Log.LogMessage(MessageImportance.High, "{0} is serving {1} from {2}; Ctrl+C stops it.", ServerName, endpoint, database.Describe());
        await using (var stats = ReportsOwnStats && !string.IsNullOrEmpty(StatsFile) ? new ServerStatsWriter(StatsFile, () => RequestsWaiting) : null)
            await serve(stop.Token).ConfigureAwait(false);
        if (ExitOnInterrupt && (cancellationToken.IsCancellationRequested || terminated))
        {
            // Stopped, its port free: say so on the person's screen (the build's loggers may not get to print before the exit) and end with 0.
            Log.LogMessage(MessageImportance.Low, "{0} stopped.", ServerName);
            Console.Out.WriteLine($"  {ServerName} stopped ({(terminated ? "SIGTERM" : "Ctrl+C")}); exit code 0.");
            Console.Out.Flush();
            Environment.Exit(0);
        }
        Log.LogMessage(MessageImportance.High, "{0} stopped.", ServerName);
    }
}
