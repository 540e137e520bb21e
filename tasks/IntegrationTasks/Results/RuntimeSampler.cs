using System.Diagnostics;

namespace IntegrationTasks.Results;

/// <summary>
/// What a run costs the client process besides time: CPU, allocations, and the thread pool's
/// state sampled every 100 ms (threads, queued work items, completed work items).
/// </summary>
public sealed class RuntimeSampler : IAsyncDisposable
{
    private readonly TimeSpan _cpuAtStart = Process.GetCurrentProcess().TotalProcessorTime;
    private readonly long _allocatedAtStart = GC.GetTotalAllocatedBytes();
    private readonly long _completedAtStart = ThreadPool.CompletedWorkItemCount;
    private readonly CancellationTokenSource _stop = new();
    private readonly Task _sampling;
    private int _maxThreads;
    private long _maxQueue;

    public RuntimeSampler() => _sampling = SampleAsync();

    public sealed record Figures(double CpuSeconds, long AllocatedBytes, int MaxThreads, long MaxQueue, long CompletedWorkItems);

    private async Task SampleAsync()
    {
        using var timer = new PeriodicTimer(TimeSpan.FromMilliseconds(100));
        do
        {
            Sample();
        }
        while (await timer.WaitForNextTickAsync(_stop.Token).ConfigureAwait(false));
    }

    private void Sample()
    {
        _maxThreads = Math.Max(_maxThreads, ThreadPool.ThreadCount);
        _maxQueue = Math.Max(_maxQueue, ThreadPool.PendingWorkItemCount);
    }

    public async Task<Figures> StopAsync()
    {
        Sample();
        await _stop.CancelAsync().ConfigureAwait(false);
        try
        {
            await _sampling.ConfigureAwait(false);
        }
        catch (OperationCanceledException)
        {
        }
        return new Figures(
            (Process.GetCurrentProcess().TotalProcessorTime - _cpuAtStart).TotalSeconds,
            GC.GetTotalAllocatedBytes() - _allocatedAtStart,
            _maxThreads, _maxQueue, ThreadPool.CompletedWorkItemCount - _completedAtStart);
    }

    public async ValueTask DisposeAsync()
    {
        await _stop.CancelAsync().ConfigureAwait(false);
        _stop.Dispose();
    }
}
