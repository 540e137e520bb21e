using System.Text.Json;

namespace IntegrationTasks.Labs;

/// <summary>One second of a process's runtime counters, as dotnet-counters shows them.</summary>
public sealed record CounterSample(double Second, int ThreadCount, long QueueLength, long CompletedPerSecond, double WorkingSetMegabytes);

/// <summary>Appends the thread pool's counters once a second (JSON lines), from inside the process watched.</summary>
public sealed class RuntimeCounters : IAsyncDisposable
{
    private readonly string _path;
    private readonly RuntimeSampler _sampler;
    private long _completed = ThreadPool.CompletedWorkItemCount;

    public RuntimeCounters(string path)
    {
        _path = Path.GetFullPath(path);
        Directory.CreateDirectory(Path.GetDirectoryName(_path)!);
        File.WriteAllText(_path, "");
        _sampler = new RuntimeSampler(TimeSpan.FromSeconds(1), Append, sampleAtStart: false);
    }

    private void Append(RuntimeSample sample)
    {
        var line = new CounterSample(Math.Round(sample.Elapsed.TotalSeconds, 1), sample.Threads, sample.QueueLength,
            sample.CompletedWorkItems - _completed, sample.WorkingSetMegabytes);
        _completed = sample.CompletedWorkItems;
        File.AppendAllText(_path, JsonSerializer.Serialize(line, JsonFiles.Options) + "\n");
    }

    public static List<CounterSample> Read(string path) =>
        File.Exists(path)
            ? File.ReadLines(path).Where(l => l.Length > 0).Select(l => JsonSerializer.Deserialize<CounterSample>(l, JsonFiles.Options)!).ToList()
            : [];

    public ValueTask DisposeAsync() => _sampler.DisposeAsync();
}
