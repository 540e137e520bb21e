using System.Globalization;
using System.Text.Json;
using IntegrationTasks.Results;

namespace IntegrationTasks.Labs;

/// <summary>One benchmark of the async-overhead article's lab: time and allocation per call.</summary>
public sealed record AsyncOverheadResult(string Method, double NanosecondsPerCall, double? ErrorNanoseconds, long BytesPerCall);

/// <summary>Reads BenchmarkDotNet's full JSON report and writes the lab's section of the suite's report.</summary>
public static class AsyncOverheadReport
{
    public const string FileName = "asyncoverhead.json";
    private static readonly CultureInfo Invariant = CultureInfo.InvariantCulture;

    /// <summary>The article's own published figures (x64), where it gives one.</summary>
    public static string Article(string method) => method switch
    {
        "Sync" => "baseline",
        "AsyncTask" => "≈ +15% over sync; 88 B per Task<T>",
        "SyncOverAsync" => "0 B (already-completed init)",
        "AsyncValueTask" or "FastPath" => "no allocation",
        "AwaitYielding" or "AwaitYieldingValueTask" => "≈ 4 µs and ≈ 300 B per real await",
        _ => "–",
    };

    public static List<AsyncOverheadResult> ParseBenchmarkDotNet(string json)
    {
        try
        {
            using var document = JsonDocument.Parse(json);
            return document.RootElement.GetProperty("Benchmarks").EnumerateArray().Select(b => new AsyncOverheadResult(
                b.GetProperty("Method").GetString()!,
                b.GetProperty("Statistics").GetProperty("Mean").GetDouble(),
                b.GetProperty("Statistics").TryGetProperty("ConfidenceInterval", out var ci) && ci.TryGetProperty("Margin", out var margin) ? margin.GetDouble() : null,
                b.GetProperty("Memory").GetProperty("BytesAllocatedPerOperation").GetInt64())).ToList();
        }
        catch (Exception e) when (e is JsonException or KeyNotFoundException or InvalidOperationException)
        {
            throw new IntegrationException(ErrorCodes.ResultsUnreadable, $"BenchmarkDotNet's report cannot be read: {e.Message}", e);
        }
    }

    public static void Save(string directory, IReadOnlyList<AsyncOverheadResult> results) => LabResults.Save(directory, FileName, results);

    public static List<AsyncOverheadResult>? Load(string directory) => LabResults.Load<List<AsyncOverheadResult>>(directory, FileName);

    public static ReportDocument Document(IReadOnlyList<AsyncOverheadResult> results)
    {
        var sync = results.FirstOrDefault(r => r.Method == "Sync")?.NanosecondsPerCall;
        return new ReportDocument()
            .AddHeading(2, "AsyncOverhead: the cost of async methods (BenchmarkDotNet, per call, 100 cached prices a run)")
            .AddTable<AsyncOverheadResult>(
            [
                new("method", "Method", r => r.Method, Numeric: false),
                new("nsPerCall", "ns / call", r => r.NanosecondsPerCall.ToString("F2", Invariant)),
                new("errorNs", "± (99.9% CI)", r => r.ErrorNanoseconds is { } e ? e.ToString("F2", Invariant) : "–"),
                new("ratioToSync", "× Sync", r => sync is > 0 ? (r.NanosecondsPerCall / sync.Value).ToString("F2", Invariant) : "–"),
                new("bytesPerCall", "Bytes / call", r => r.BytesPerCall.ToString("N0", Invariant)),
                new("article", "The article", r => Article(r.Method), Numeric: false),
            ], results, ReportFormats.Markdown)
            .AddParagraph("""
                BenchmarkDotNet's short job (3 iterations): the CI is wide; the ratios and allocations are the point. An async method that completes
                synchronously still builds its state machine and, for Task<T> of a non-cached value, allocates the Task; ValueTask and the fast path
                do not allocate. A real await (Task.Yield) queues a continuation on the thread pool.
                """, ReportFormats.Markdown)
            .AddChart(new ReportBarChart("async-time", "Nanoseconds per call",
                [.. results.Select(r => new ReportBar(r.Method, r.NanosecondsPerCall, r.ErrorNanoseconds ?? 0, r.Method == "Sync"))], "F1"))
            .AddChart(new ReportBarChart("async-alloc", "Bytes allocated per call", [.. results.Select(r => new ReportBar(r.Method, r.BytesPerCall, 0, r.Method == "Sync"))], "N0"));
    }
}

/// <summary>Runs the BenchmarkDotNet project (labs/AsyncOverhead) and records its figures beside the transports' results.</summary>
public sealed class AsyncOverheadTask : IntegrationTask
{
    [Required] public string Project { get; set; } = "";
    [Required] public string ArtifactsDirectory { get; set; } = "";
    [Required] public string ResultsDirectory { get; set; } = "";

    /// <summary>BenchmarkDotNet's job: short (3 iterations, a quick look) or default (minutes, tighter intervals).</summary>
    public string Job { get; set; } = "short";

    public int TimeoutSeconds { get; set; } = SettingDefaults.TimeoutSeconds;

    protected override async Task ExecuteAsync(CancellationToken cancellationToken)
    {
        string[] arguments = ["run", "-c", "Release", "--project", Project, "--", "--filter", "*", "--job", Job, "--exporters", "json", "--artifacts", ArtifactsDirectory];
        Log.LogMessage(MessageImportance.High, "AsyncOverhead: dotnet {0}", string.Join(' ', arguments));
        var run = await Hosting.ExternalCommand.RunAsync(Hosting.ServerLaunch.DotnetHost, arguments, TimeSpan.FromSeconds(TimeoutSeconds), cancellationToken)
            .ConfigureAwait(false);
        if (run.ExitCode != 0)
            throw new IntegrationException(ErrorCodes.LabFailed, $"The benchmarks failed ({run.ExitCode}): {run.Errors}{run.Output[^Math.Min(2000, run.Output.Length)..]}");
        var report = Directory.EnumerateFiles(Path.Combine(ArtifactsDirectory, "results"), "*-report-full-compressed.json").FirstOrDefault()
                     ?? throw new IntegrationException(ErrorCodes.ResultsUnreadable, $"BenchmarkDotNet wrote no JSON report under {ArtifactsDirectory}/results.");
        var results = AsyncOverheadReport.ParseBenchmarkDotNet(await File.ReadAllTextAsync(report, cancellationToken).ConfigureAwait(false));
        AsyncOverheadReport.Save(ResultsDirectory, results);
        foreach (var r in results)
            Log.LogMessage(MessageImportance.High, "AsyncOverhead {0}: {1:F2} ns and {2:N0} bytes per call.", r.Method, r.NanosecondsPerCall, r.BytesPerCall);
    }
}
