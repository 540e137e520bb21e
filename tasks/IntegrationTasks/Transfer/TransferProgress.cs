using System.Diagnostics;
using System.Globalization;

namespace IntegrationTasks.Transfer;

/// <summary>
/// A line every <c>interval</c> while a client run goes on (batches committed of the total, records/s), so a long run is never
/// silent on the screen. Nothing is printed for a run shorter than one interval.
/// </summary>
public sealed class TransferProgress : IAsyncDisposable
{
    private readonly CancellationTokenSource _stop = new();
    private readonly Task _loop;

    public TransferProgress(string transport, BatchPlan plan, Func<long> recordsCommitted, IEventLog log, TimeSpan interval)
    {
        _loop = interval > TimeSpan.Zero ? ReportAsync(transport, plan, recordsCommitted, log, interval, _stop.Token) : Task.CompletedTask;
    }

    /// <summary>One progress line: what a person reads to know how far a run is and how fast it goes.</summary>
    public static string Describe(string transport, BatchPlan plan, long records, TimeSpan elapsed)
    {
        var rate = records / Math.Max(elapsed.TotalSeconds, 1e-9);
        var left = rate > 0 ? TimeSpan.FromSeconds((plan.Records - records) / rate) : (TimeSpan?)null;
        return string.Create(CultureInfo.InvariantCulture,
            $"{transport}: {records / plan.BatchSize:N0} of {plan.TotalBatches:N0} batches committed ({records:N0} of {plan.Records:N0} records), " +
            $"{rate:N0} records/s, {elapsed.TotalSeconds:F0} s elapsed{(left is { } l ? $", about {Math.Ceiling(l.TotalSeconds):N0} s left" : "")}.");
    }

    private static async Task ReportAsync(string transport, BatchPlan plan, Func<long> recordsCommitted, IEventLog log, TimeSpan interval,
        CancellationToken stop)
    {
        var watch = Stopwatch.StartNew();
        using var timer = new PeriodicTimer(interval);
        try
        {
            while (await timer.WaitForNextTickAsync(stop).ConfigureAwait(false))
                log.Info(Describe(transport, plan, recordsCommitted(), watch.Elapsed));
        }
        catch (OperationCanceledException)
        {
            // the run ended
        }
    }

    public async ValueTask DisposeAsync()
    {
        await _stop.CancelAsync().ConfigureAwait(false);
        await _loop.ConfigureAwait(false);
        _stop.Dispose();
    }
}
