using System.Diagnostics;

namespace IntegrationTasks.Common;

/// <summary>One reading of this process's runtime: thread pool, allocations, working set, and the maxima seen so far.</summary>
public readonly record struct RuntimeSample(
    TimeSpan Elapsed, int Threads, long QueueLength, long CompletedWorkItems, long AllocatedBytes, double WorkingSetMegabytes,
    int MaxThreads, long MaxQueueLength);

/// <summary>
/// Samples this process's thread pool on a timer (threads, queued and completed work items) and keeps
/// the maxima; each sample also goes to an observer, if any. Clients use it for what a run costs,
/// servers to report their side to the orchestrator, the starvation lab for its time series.
/// </summary>
public sealed class RuntimeSampler : IAsyncDisposable
{
    private readonly Stopwatch _clock = Stopwatch.StartNew();
    private readonly TimeSpan _userCpuAtStart;
    private readonly TimeSpan _systemCpuAtStart;
    private readonly long _allocatedAtStart = GC.GetTotalAllocatedBytes();
    private readonly long _completedAtStart = ThreadPool.CompletedWorkItemCount;
    private readonly long _jitMethodsAtStart = System.Runtime.JitInfo.GetCompiledMethodCount();
    private readonly TimeSpan _jitTimeAtStart = System.Runtime.JitInfo.GetCompilationTime();
    private readonly TimeSpan _gcPauseAtStart = GC.GetTotalPauseDuration();
    private readonly int _gen0AtStart = GC.CollectionCount(0);
    private readonly int _gen1AtStart = GC.CollectionCount(1);
    private readonly int _gen2AtStart = GC.CollectionCount(2);
    private readonly double? _stealAtStart = MachineCpu.StealSeconds();
    private readonly Action<RuntimeSample>? _observer;
    private readonly CancellationTokenSource _stop = new();
    private readonly Task _sampling;
    private readonly object _gate = new();
    private int _maxThreads;
    private long _maxQueue;
    private int _maxProcessThreads;
    private bool _stopped;

    /// <param name="interval">Time between samples (100 ms for runs, 1 s for the lab's series).</param>
    /// <param name="observer">Called with every sample, on the sampling loop; it must not block for long.</param>
    /// <param name="sampleAtStart">Whether the first sample is taken at once rather than after one interval.</param>
    public RuntimeSampler(TimeSpan interval, Action<RuntimeSample>? observer = null, bool sampleAtStart = true)
    {
        using (var process = Process.GetCurrentProcess())
            (_userCpuAtStart, _systemCpuAtStart) = (process.UserProcessorTime, process.PrivilegedProcessorTime);
        _observer = observer;
        _sampling = SampleAsync(interval, sampleAtStart);
    }

    /// <param name="JitMethods">Methods the JIT compiled meanwhile (a method tiered up counts again): code still warming up.</param>
    /// <param name="GcPauseSeconds">Time the process's threads were paused by the GC meanwhile (every generation).</param>
    /// <param name="GcCollections">Collections meanwhile by generation (0, 1, 2); a gen 2 collection counts in gen 0 and 1 too, as .NET counts.</param>
    /// <param name="StealSeconds">The machine's steal meanwhile, over all its CPUs (<see cref="MachineCpu"/>); null where not readable.</param>
    /// <param name="UserCpuSeconds">Of <paramref name="CpuSeconds"/>, the time in user mode; the rest was in the kernel.</param>
    /// <param name="MaxProcessThreads">The most threads the process had at once, the runtime's own and the pool's (0 where not readable).</param>
    public sealed record Figures(double CpuSeconds, long AllocatedBytes, int MaxThreads, long MaxQueue, long CompletedWorkItems,
        long JitMethods, double JitSeconds, double GcPauseSeconds, int[] GcCollections, double? StealSeconds = null,
        double UserCpuSeconds = 0, int MaxProcessThreads = 0)
    {
        public double SystemCpuSeconds => CpuSeconds - UserCpuSeconds;
    }

    /// <summary>
    /// On a thread of its own, not the thread pool: a pool timer's tick is a work item (so an idle process never looked idle in its
    /// own completed-items count) and its wake-ups added markedly to an idle server's CPU.
    /// </summary>
    private Task SampleAsync(TimeSpan interval, bool sampleAtStart)
    {
        var done = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        if (sampleAtStart)
            Sample();
        var thread = new Thread(() =>
        {
            try
            {
                while (!_stop.Token.WaitHandle.WaitOne(interval))
                    Sample();
                done.SetResult();
            }
            catch (Exception e)
            {
                done.SetException(e);
            }
        })
        {
            IsBackground = true, Name = "IntegrationTasks runtime sampler",
        };
        thread.Start();
        return done.Task;
    }

    /// <summary>Takes a sample now (and hands it to the observer).</summary>
    public RuntimeSample Sample()
    {
        RuntimeSample sample;
        lock (_gate)
        {
            var threads = ThreadPool.ThreadCount;
            var queue = ThreadPool.PendingWorkItemCount;
            _maxThreads = Math.Max(_maxThreads, threads);
            _maxQueue = Math.Max(_maxQueue, queue);
            _maxProcessThreads = Math.Max(_maxProcessThreads, ProcessThreads());
            sample = new RuntimeSample(_clock.Elapsed, threads, queue, ThreadPool.CompletedWorkItemCount, GC.GetTotalAllocatedBytes(),
                Environment.WorkingSet / 1048576.0, _maxThreads, _maxQueue);
        }
        _observer?.Invoke(sample);
        return sample;
    }

    /// <summary>Stops sampling and returns what the process spent since the sampler started.</summary>
    public async Task<Figures> StopAsync()
    {
        // The loop ends first, so that the last sample's observer never runs beside the loop's.
        await StopSamplingAsync().ConfigureAwait(false);
        var last = Sample();
        using var process = Process.GetCurrentProcess();
        var user = (process.UserProcessorTime - _userCpuAtStart).TotalSeconds;
        var system = (process.PrivilegedProcessorTime - _systemCpuAtStart).TotalSeconds;
        int maxProcessThreads;
        lock (_gate)
            maxProcessThreads = _maxProcessThreads;
        return new Figures(
            user + system,
            last.AllocatedBytes - _allocatedAtStart,
            last.MaxThreads, last.MaxQueueLength, last.CompletedWorkItems - _completedAtStart,
            System.Runtime.JitInfo.GetCompiledMethodCount() - _jitMethodsAtStart, (System.Runtime.JitInfo.GetCompilationTime() - _jitTimeAtStart).TotalSeconds,
            (GC.GetTotalPauseDuration() - _gcPauseAtStart).TotalSeconds,
            [GC.CollectionCount(0) - _gen0AtStart, GC.CollectionCount(1) - _gen1AtStart, GC.CollectionCount(2) - _gen2AtStart],
            MachineCpu.StealSeconds() - _stealAtStart is { } steal ? Math.Round(steal, 2) : null, // counted in hundredths
            user, maxProcessThreads);
    }

    /// <summary>The process's threads now, from /proc/self/stat (num_threads, cheap enough for every sample); 0 where not readable.</summary>
    private static int ProcessThreads()
    {
        try
        {
            var stat = File.ReadAllText("/proc/self/stat");
            // num_threads is field 20 of stat(5): 17 after the command name, which may hold spaces and ends at the last ')'.
            var fields = stat[(stat.LastIndexOf(')') + 2)..].Split(' ');
            return int.Parse(fields[17], System.Globalization.CultureInfo.InvariantCulture);
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException or FormatException or IndexOutOfRangeException)
        {
            return 0;
        }
    }

    private async Task StopSamplingAsync()
    {
        lock (_gate)
        {
            if (_stopped)
                return;
            _stopped = true;
        }
        await _stop.CancelAsync().ConfigureAwait(false);
        await _sampling.ConfigureAwait(false);
    }

    public async ValueTask DisposeAsync()
    {
        await StopSamplingAsync().ConfigureAwait(false);
        _stop.Dispose();
    }
}
