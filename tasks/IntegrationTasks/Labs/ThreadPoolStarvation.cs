using System.Globalization;
using IntegrationTasks.Hosting;
using IntegrationTasks.Results;

namespace IntegrationTasks.Labs;

/// <summary>One load run of the thread-pool starvation lab: an endpoint, the thread pool's minimum, and what hey and the counters saw.</summary>
public sealed record StarvationRun(string Scenario, string Path, int MinThreads, int Concurrency, int Requests, HeyOutput Load,
    IReadOnlyList<CounterSample> Counters, double? ArticleRequestsPerSecond)
{
    /// <summary>Each request waits 0.5 s in the database: c concurrent clients can get at most c / 0.5 s requests per second.</summary>
    public double LimitRequestsPerSecond => Concurrency / 0.5;
}

/// <summary>
/// The thread-pool starvation article's experiment: a Kestrel app (the HTTP host process) whose two endpoints wait 500 ms in
/// PostgreSQL, loaded with hey — the synchronous endpoint, the asynchronous one, and the synchronous
/// one again with the thread pool's minimum raised (the mitigation a reader would try). The app
/// samples its own thread count, queue length and completed work items once a second.
/// </summary>
public sealed class ThreadPoolStarvationTask : IntegrationTask
{
    /// <summary>The PostgreSQL the endpoints wait in; when empty, the suite's private cluster (<see cref="PostgresScript"/>).</summary>
    public string PgConnString { get; set; } = "";

    /// <summary>scripts/postgres.sh: its cluster is started if it is not running, and then stopped again when the lab ends.</summary>
    public string PostgresScript { get; set; } = "";
    [Required] public string HostAssembly { get; set; } = "";
    [Required] public string WorkDirectory { get; set; } = "";
    [Required] public string ResultsDirectory { get; set; } = "";
    public int Port { get; set; } = 8090;
    public int Concurrency { get; set; } = 100;
    public int Requests { get; set; } = 1000;
    public int RaisedMinThreads { get; set; } = 200;
    public string Hey { get; set; } = "hey";
    public int LoadTimeoutSeconds { get; set; } = 600;

    protected override async Task ExecuteAsync(CancellationToken cancellationToken)
    {
        if (PgConnString.Length > 0)
        {
            await RunScenariosAsync(PgConnString, cancellationToken).ConfigureAwait(false);
            return;
        }
        if (PostgresScript.Length == 0)
            throw new IntegrationException(ErrorCodes.InvalidParameter, "ThreadPoolStarvation needs PgConnString or PostgresScript.");
        var directory = (await ExternalCommand.RunAsync("bash", [PostgresScript, "dir"], TimeSpan.FromSeconds(10), cancellationToken)
            .ConfigureAwait(false)).Output.Trim();
        await using var cluster = await ScriptedService.EnsureRunningAsync(PostgresScript, $"the PostgreSQL cluster ({directory})", EventLog, cancellationToken)
            .ConfigureAwait(false);
        await RunScenariosAsync(cluster.Output, cancellationToken).ConfigureAwait(false);
    }

    private async Task RunScenariosAsync(string pgConnString, CancellationToken cancellationToken)
    {
        (string Name, string Path, int MinThreads, double? Article)[] scenarios =
        [
            ("sync", "/starvation/sync", 0, 36.6380),
            ("async", "/starvation/async", 0, 180.0777),
            ($"sync, min threads {RaisedMinThreads}", "/starvation/sync", RaisedMinThreads, null),
        ];
        Directory.CreateDirectory(WorkDirectory);
        var runs = new List<StarvationRun>();
        foreach (var (name, path, minThreads, article) in scenarios)
        {
            var counters = Path.Combine(Path.GetFullPath(WorkDirectory), $"counters-{runs.Count}.jsonl");
            var url = $"http://127.0.0.1:{Port}";
            string[] arguments =
            [
                HostAssembly, "--module", "starvation", "--url", url,
                "--counters-file", counters, "--min-threads", minThreads.ToString(CultureInfo.InvariantCulture),
                "--stop-on-stdin-close",
            ];
            using var host = ServerProcess.Start("StarvationHost", new ServerLaunch(ServerLaunch.DotnetHost, arguments, WorkDirectory), null, ServerLog.To(Log, "StarvationHost"),
                environment: new Dictionary<string, string> { [ServerSignals.ConnectionStringVariable] = pgConnString });
            await host.WaitReadyAsync(TimeSpan.FromSeconds(60), cancellationToken).ConfigureAwait(false);
            Log.LogMessage(MessageImportance.High, "ThreadPoolStarvation {0}: hey -n {1} -c {2} {3}{4}", name, Requests, Concurrency, url, path);
            var output = await RunHeyAsync($"{url}{path}", cancellationToken).ConfigureAwait(false);
            await host.StopAsync(TimeSpan.FromSeconds(20), CancellationToken.None).ConfigureAwait(false);
            var run = new StarvationRun(name, path, minThreads, Concurrency, Requests, HeyOutput.Parse(output), RuntimeCounters.Read(counters), article);
            Log.LogMessage(MessageImportance.High,
                "ThreadPoolStarvation {0}: {1:F1} req/s (limit {2:F0}), average {3:F3} s, slowest {4:F3} s, threads up to {5}, queue up to {6}.",
                name, run.Load.RequestsPerSecond, run.LimitRequestsPerSecond, run.Load.AverageSeconds, run.Load.SlowestSeconds,
                run.Counters.Count > 0 ? run.Counters.Max(c => c.ThreadCount) : 0, run.Counters.Count > 0 ? run.Counters.Max(c => c.QueueLength) : 0);
            runs.Add(run);
        }
        StarvationReport.Save(ResultsDirectory, runs);
    }

    private async Task<string> RunHeyAsync(string url, CancellationToken cancellationToken)
    {
        var run = await ExternalCommand.RunAsync(Hey,
            ["-n", Requests.ToString(CultureInfo.InvariantCulture), "-c", Concurrency.ToString(CultureInfo.InvariantCulture), "-t", "60", url],
            TimeSpan.FromSeconds(LoadTimeoutSeconds), cancellationToken, installHint: "Install it with: apt-get install -y hey").ConfigureAwait(false);
        return run.ExitCode == 0 ? run.Output : throw new IntegrationException(ErrorCodes.LabFailed, $"hey failed ({run.ExitCode}): {run.Errors}");
    }
}

/// <summary>The lab's results file (starvation.json beside the transports' results) and its report sections.</summary>
public static class StarvationReport
{
    public const string FileName = "starvation.json";
    private static readonly CultureInfo Invariant = CultureInfo.InvariantCulture;

    public static void Save(string directory, IReadOnlyList<StarvationRun> runs) => LabResults.Save(directory, FileName, runs);

    public static List<StarvationRun>? Load(string directory) => LabResults.Load<List<StarvationRun>>(directory, FileName);

    private static string Percentile(StarvationRun r, int p) => r.Load.Percentiles.TryGetValue(p, out var v) ? v.ToString("F3", Invariant) : "–";

    private static readonly IReadOnlyList<Results.ReportColumn<StarvationRun>> Columns =
    [
        new("scenario", "Scenario", r => r.Scenario, Numeric: false),
        new("requests", "Requests", r => r.Requests.ToString("N0", Invariant)),
        new("concurrency", "Concurrency", r => r.Concurrency.ToString(Invariant)),
        new("requestsPerSecond", "Req/s", r => r.Load.RequestsPerSecond.ToString("F1", Invariant)),
        new("limit", "Limit (c ÷ 0.5 s)", r => r.LimitRequestsPerSecond.ToString("F0", Invariant)),
        new("ofLimit", "Of the limit", r => (r.Load.RequestsPerSecond / r.LimitRequestsPerSecond * 100).ToString("F0", Invariant) + "%"),
        new("averageSeconds", "Average (s)", r => r.Load.AverageSeconds.ToString("F3", Invariant)),
        new("p50Seconds", "p50 (s)", r => Percentile(r, 50)),
        new("p90Seconds", "p90 (s)", r => Percentile(r, 90)),
        new("p99Seconds", "p99 (s)", r => Percentile(r, 99)),
        new("slowestSeconds", "Slowest (s)", r => r.Load.SlowestSeconds.ToString("F3", Invariant)),
        new("maxThreads", "Threads (max)", r => (r.Counters.Count > 0 ? r.Counters.Max(c => c.ThreadCount) : 0).ToString(Invariant)),
        new("maxQueue", "Queue (max)", r => (r.Counters.Count > 0 ? r.Counters.Max(c => c.QueueLength) : 0).ToString(Invariant)),
        new("maxWorkingSetMB", "Working set (MB, max)", r => (r.Counters.Count > 0 ? r.Counters.Max(c => c.WorkingSetMegabytes) : 0).ToString("F0", Invariant)),
        new("articleRequestsPerSecond", "Article req/s", r => r.ArticleRequestsPerSecond is { } a ? a.ToString("F1", Invariant) : "–"),
    ];

    /// <summary>The table in results.md; on the page, thread count and queue length second by second, one line per scenario.</summary>
    public static ReportDocument Document(IReadOnlyList<StarvationRun> runs)
    {
        ReportLineChart Chart(string id, string title, Func<CounterSample, double> value) =>
            new(id, title, [.. runs.Select(r => new ReportSeries(r.Scenario, [.. r.Counters.Select(c => ((double)c.Second, value(c)))]))]);
        return new ReportDocument()
            .AddHeading(2, "ThreadPoolStarvation: endpoints waiting 500 ms in PostgreSQL, loaded with hey")
            .AddTable(Columns, runs, ReportFormats.Markdown)
            .AddParagraph("""
                The article (seed 003, SQL Server, docker): sync 36.6 req/s, average 2.6 s, queue 74, 36 threads; async 180.1 req/s, average 0.53 s,
                queue 0, 30 threads. The synchronous endpoint holds a thread-pool thread for each 500 ms wait, and the pool adds threads only about
                one or two a second, so requests queue; the asynchronous one holds no thread while PostgreSQL waits. Raising the pool's minimum lets
                the synchronous endpoint start a thread per waiting request at once — at the cost of those threads (their stacks: see the working set).
                """, ReportFormats.Markdown)
            .AddChart(Chart("starvation-threads", "Thread-pool threads, each second", c => c.ThreadCount))
            .AddChart(Chart("starvation-queue", "Thread-pool queue length, each second", c => c.QueueLength));
    }
}
