using System.Diagnostics;
using System.Text.Json;

namespace IntegrationTasks.Hosting;

/// <summary>
/// A server process's own counters, cumulative since it started; <see cref="MaxConnections"/> is the most client connections it held
/// open at one sample (<see cref="OpenConnections"/>; null where they cannot be read, 0 for a server clients do not connect to);
/// <see cref="MaxRequestsWaiting"/> the most requests that waited for it at one sample, where the server can tell (a broker's queue,
/// an inbox), else null.
/// </summary>
public sealed record ServerStatsSnapshot(int ProcessId, long AllocatedBytes, long CompletedWorkItems, int MaxThreads, long MaxQueue, int? MaxConnections = null,
    long? MaxRequestsWaiting = null);

/// <summary>
/// How a server reports its side to the orchestrator: every 100 ms it samples its cumulative
/// allocations and thread-pool figures and, when they moved by more than waiting moves them, writes them to a small file
/// (atomically: temporary name, then rename),
/// and the orchestrator, at the end of each repetition, takes the difference from the last reading.
/// </summary>
public sealed class ServerStatsWriter : IAsyncDisposable
{
    private readonly string _path;
    private readonly RuntimeSampler _sampler;
    private readonly Func<long?>? _requestsWaiting;
    private int? _maxConnections;
    private long? _maxWaiting;
    private long _itemsAtLastCount = -1;
    private long _lastCountTimestamp;
    private ServerStatsSnapshot? _lastWritten;

    /// <summary>
    /// Reading /proc's TCP tables costs milliseconds however few sockets there are (the kernel walks its whole hash table): every
    /// 100 ms that is a real share of a core per server, idle or not, and an interleaved RunAll keeps every server running.
    /// So connections are counted at most once a second, and only when the server did some work since the last count.
    /// </summary>
    private static readonly TimeSpan CountInterval = TimeSpan.FromSeconds(1);

    /// <param name="requestsWaiting">How many requests wait for the server now, where it can tell; sampled with the rest.</param>
    public ServerStatsWriter(string path, Func<long?>? requestsWaiting = null)
    {
        _path = Path.GetFullPath(path);
        _requestsWaiting = requestsWaiting;
        Directory.CreateDirectory(Path.GetDirectoryName(_path)!);
        _sampler = new RuntimeSampler(TimeSpan.FromMilliseconds(100), Write);
    }

    private void Write(RuntimeSample sample)
    {
        if (sample.CompletedWorkItems != _itemsAtLastCount && Stopwatch.GetElapsedTime(_lastCountTimestamp) >= CountInterval)
        {
            _itemsAtLastCount = sample.CompletedWorkItems;
            _lastCountTimestamp = Stopwatch.GetTimestamp();
            if (OpenConnections.Count() is { } open)
                _maxConnections = Math.Max(_maxConnections ?? 0, open);
        }
        if (_requestsWaiting?.Invoke() is { } waiting)
            _maxWaiting = Math.Max(_maxWaiting ?? 0, waiting);
        var snapshot = new ServerStatsSnapshot(Environment.ProcessId, sample.AllocatedBytes, sample.CompletedWorkItems, sample.MaxThreads, sample.MaxQueueLength,
            _maxConnections, _maxWaiting);
        if (!HasNews(_lastWritten, snapshot))
            return;
        var temporary = _path + ".tmp";
        try
        {
            File.WriteAllText(temporary, JsonSerializer.Serialize(snapshot, JsonFiles.Options));
            File.Move(temporary, _path, overwrite: true);
            _lastWritten = snapshot;
        }
        catch (IOException)
        {
            // A missed sample only makes the next reading cover a little more; the server goes on.
        }
    }

    /// <summary>
    /// Whether a snapshot says more than the one last written: other maxima, or more work items and allocations than a waiting server
    /// makes on its own (Kestrel's heartbeat, this sampling), which the next write carries anyway. A server waiting for its next
    /// run so writes every few seconds instead of ten times a second, which cost a waiting server a large share of its CPU, and an
    /// interleaved RunAll keeps a dozen servers waiting beside every run.
    /// </summary>
    internal static bool HasNews(ServerStatsSnapshot? last, ServerStatsSnapshot now) =>
        last is null
        || now.CompletedWorkItems - last.CompletedWorkItems > IdleWorkItems || now.AllocatedBytes - last.AllocatedBytes > IdleAllocatedBytes
        || now with { AllocatedBytes = 0, CompletedWorkItems = 0 } != last with { AllocatedBytes = 0, CompletedWorkItems = 0 };

    private const int IdleWorkItems = 8;
    private const long IdleAllocatedBytes = 256 * 1024;

    public static ServerStatsSnapshot? Read(string path)
    {
        try
        {
            return File.Exists(path) ? JsonSerializer.Deserialize<ServerStatsSnapshot>(File.ReadAllText(path), JsonFiles.Options) : null;
        }
        catch (Exception e) when (e is IOException or JsonException)
        {
            return null;
        }
    }

    public async ValueTask DisposeAsync()
    {
        await _sampler.StopAsync().ConfigureAwait(false); // its last sample is written too
        await _sampler.DisposeAsync().ConfigureAwait(false);
    }
}
