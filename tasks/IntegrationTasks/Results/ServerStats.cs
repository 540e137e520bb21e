using System.Text.Json;

namespace IntegrationTasks.Results;

/// <summary>A server process's own counters, cumulative since it started.</summary>
public sealed record ServerStatsSnapshot(int ProcessId, long AllocatedBytes, long CompletedWorkItems, int MaxThreads, long MaxQueue);

/// <summary>
/// How a server reports its side to the orchestrator: every 100 ms it writes its cumulative
/// allocations and thread-pool figures to a small file (atomically: temporary name, then rename),
/// and the orchestrator, at the end of each repetition, takes the difference from the last reading.
/// </summary>
public sealed class ServerStatsWriter : IAsyncDisposable
{
    private readonly string _path;
    private readonly CancellationTokenSource _stop = new();
    private readonly Task _loop;
    private int _maxThreads;
    private long _maxQueue;

    public ServerStatsWriter(string path)
    {
        _path = Path.GetFullPath(path);
        Directory.CreateDirectory(Path.GetDirectoryName(_path)!);
        _loop = RunAsync();
    }

    private async Task RunAsync()
    {
        using var timer = new PeriodicTimer(TimeSpan.FromMilliseconds(100));
        try
        {
            do
            {
                Write();
            }
            while (await timer.WaitForNextTickAsync(_stop.Token).ConfigureAwait(false));
        }
        catch (OperationCanceledException)
        {
        }
    }

    private void Write()
    {
        _maxThreads = Math.Max(_maxThreads, ThreadPool.ThreadCount);
        _maxQueue = Math.Max(_maxQueue, ThreadPool.PendingWorkItemCount);
        var snapshot = new ServerStatsSnapshot(Environment.ProcessId, GC.GetTotalAllocatedBytes(), ThreadPool.CompletedWorkItemCount, _maxThreads, _maxQueue);
        var temporary = _path + ".tmp";
        try
        {
            File.WriteAllText(temporary, JsonSerializer.Serialize(snapshot, MeasurementLog.Json));
            File.Move(temporary, _path, overwrite: true);
        }
        catch (IOException)
        {
            // A missed sample only makes the next reading cover a little more; the server goes on.
        }
    }

    public static ServerStatsSnapshot? Read(string path)
    {
        try
        {
            return File.Exists(path) ? JsonSerializer.Deserialize<ServerStatsSnapshot>(File.ReadAllText(path), MeasurementLog.Json) : null;
        }
        catch (Exception e) when (e is IOException or JsonException)
        {
            return null;
        }
    }

    public async ValueTask DisposeAsync()
    {
        await _stop.CancelAsync().ConfigureAwait(false);
        await _loop.ConfigureAwait(false);
        Write();
        _stop.Dispose();
    }
}
