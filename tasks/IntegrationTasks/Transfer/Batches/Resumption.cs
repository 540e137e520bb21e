using System.Diagnostics;

namespace IntegrationTasks.Transfer;

/// <summary>Which batches of a transfer are committed in ClientTable: what a resumed transfer still has to ask for.</summary>
public sealed class CommittedBatches(BatchPlan plan, BatchLatency? latency = null)
{
    private readonly bool[] _committed = new bool[plan.TotalBatches];

    /// <summary>Each batch's wait from request to commit: transports mark <see cref="BatchLatency.Sent"/>, commits are recorded here.</summary>
    public BatchLatency Latency { get; } = latency ?? new(plan.TotalBatches);
    private readonly Stopwatch _clock = Stopwatch.StartNew();
    private TimeSpan? _brokeAt;
    private TimeSpan _recovery;

    /// <summary>Marks a batch committed; call only after its transaction committed.</summary>
    public void Add(int batch)
    {
        Latency.Committed(batch);
        lock (_committed)
        {
            _committed[batch] = true;
            if (_brokeAt is { } brokeAt)
            {
                _recovery += _clock.Elapsed - brokeAt;
                _brokeAt = null;
            }
        }
    }

    public List<int> Missing()
    {
        lock (_committed)
            return Enumerable.Range(0, _committed.Length).Where(b => !_committed[b]).ToList();
    }

    /// <summary>From each break to the first commit after it, summed: what the breaks cost.</summary>
    public TimeSpan RecoveryTime
    {
        get
        {
            lock (_committed)
                return _recovery;
        }
    }

    internal void MarkBroken()
    {
        lock (_committed)
            _brokeAt ??= _clock.Elapsed;
    }
}

/// <summary>
/// The one resume loop every stream transport shares: run an attempt over the batches not yet committed; when the
/// transport says the connection broke, wait (0.2 s, doubling, at most 5 s) and run another, up to MaxReconnects.
/// A transport that does not resume fails with IT3006 at the first break. Nothing is asked for twice once committed,
/// and a commit is never cancelled half-way (the dialects commit with CancellationToken.None), so the import stays exact.
/// </summary>
public sealed class ResumingTransfer(BatchPlan plan, IEventLog log)
{
    public bool Resumes { get; init; }
    public int MaxReconnects { get; init; } = SettingDefaults.MaxReconnects;

    /// <summary>The wait before the first reconnection (doubling each time, at most 5 s); tests drive the loop with none.</summary>
    internal TimeSpan FirstBackoff { get; init; } = TimeSpan.FromMilliseconds(200);
    /// <summary>Open loop: batches per second on a fixed schedule (0: closed loop).</summary>
    public double Rate { get; init; }

    public CommittedBatches Committed => _committed ??= new(plan, new BatchLatency(plan.TotalBatches, Rate));
    private CommittedBatches? _committed;
    public int Reconnects { get; private set; }
    private bool _connected;

    /// <summary>Called by an attempt once it reached the server: a failure before the first one is "no server", not a break.</summary>
    public void MarkConnected() => _connected = true;

    /// <summary>What most transports call a break: their connection lost mid-transfer, or (once connected before) not reachable again.</summary>
    public static bool IsConnectionBreak(Exception e) => e is IntegrationException { Code: ErrorCodes.ConnectionLost or ErrorCodes.ConnectionFailed };

    /// <param name="isBreak">Which failures are a break to resume after; <see cref="IsConnectionBreak"/> when not given.</param>
    public async Task RunAsync(Func<IReadOnlyList<int>, CancellationToken, Task> attempt, CancellationToken cancellationToken, Func<Exception, bool>? isBreak = null)
    {
        isBreak ??= IsConnectionBreak;
        if (MaxReconnects < 0)
            throw new IntegrationException(ErrorCodes.InvalidParameter, $"MaxReconnects must be at least 0 (was {MaxReconnects}).");
        while (Committed.Missing() is { Count: > 0 } missing)
        {
            try
            {
                await attempt(missing, cancellationToken).ConfigureAwait(false);
            }
            catch (Exception e) when (!cancellationToken.IsCancellationRequested && _connected && isBreak(e))
            {
                Committed.MarkBroken();
                var left = Committed.Missing().Count;
                var message = $"The connection to the server broke with {left} of {plan.TotalBatches} batches not committed: {e.Message}";
                if (!Resumes || Reconnects >= MaxReconnects)
                    throw new IntegrationException(ErrorCodes.ConnectionLost,
                        Resumes && Reconnects > 0 ? $"{message} (gave up after {Reconnects} reconnections; see MaxReconnects)" : message, e);
                Reconnects++;
                var backoff = TimeSpan.FromMilliseconds(Math.Min(5000, FirstBackoff.TotalMilliseconds * Math.Pow(2, Reconnects - 1)));
                log.Warning(ErrorCodes.ConnectionLost,
                    $"{message}; reconnecting in {backoff.TotalSeconds:0.#} s (attempt {Reconnects} of {MaxReconnects}) to ask for the {left} batches not committed.");
                await Task.Delay(backoff, cancellationToken).ConfigureAwait(false);
            }
        }
    }
}
