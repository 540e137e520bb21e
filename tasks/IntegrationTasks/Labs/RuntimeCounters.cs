using System.Diagnostics;
using System.Text.Json;
using IntegrationTasks.Results;

namespace IntegrationTasks.Labs;

/// <summary>One second of a process's runtime counters, as dotnet-counters shows them.</summary>
public sealed record CounterSample(double Second, int ThreadCount, long QueueLength, long CompletedPerSecond, double WorkingSetMegabytes);

/// <summary>Appends the thread pool's counters once a second (JSON lines), from inside the process watched.</summary>
public sealed class RuntimeCounters : IAsyncDisposable
{
    private readonly string _path;
    private readonly CancellationTokenSource _stop = new();
    private readonly Task _loop;

    public RuntimeCounters(string path)
    {
        _path = Path.GetFullPath(path);
        Directory.CreateDirectory(Path.GetDirectoryName(_path)!);
        File.WriteAllText(_path, "");
        _loop = RunAsync();
    }

    private async Task RunAsync()
    {
        var clock = Stopwatch.StartNew();
        var completed = ThreadPool.CompletedWorkItemCount;
        using var timer = new PeriodicTimer(TimeSpan.FromSeconds(1));
        try
        {
            while (await timer.WaitForNextTickAsync(_stop.Token).ConfigureAwait(false))
            {
                var now = ThreadPool.CompletedWorkItemCount;
                var sample = new CounterSample(Math.Round(clock.Elapsed.TotalSeconds, 1), ThreadPool.ThreadCount, ThreadPool.PendingWorkItemCount,
                    now - completed, Environment.WorkingSet / 1048576.0);
                completed = now;
                await File.AppendAllTextAsync(_path, JsonSerializer.Serialize(sample, MeasurementLog.Json) + "\n").ConfigureAwait(false);
            }
        }
        catch (OperationCanceledException)
        {
        }
    }

    public static List<CounterSample> Read(string path) =>
        File.Exists(path)
            ? File.ReadLines(path).Where(l => l.Length > 0).Select(l => JsonSerializer.Deserialize<CounterSample>(l, MeasurementLog.Json)!).ToList()
            : [];

    public async ValueTask DisposeAsync()
    {
        await _stop.CancelAsync().ConfigureAwait(false);
        await _loop.ConfigureAwait(false);
        _stop.Dispose();
    }
}
