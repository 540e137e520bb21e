namespace IntegrationTasks.Common;

/// <summary>What <see cref="Turns.TakeAsync"/> came back with.</summary>
public enum TurnOutcome
{
    Taken,

    /// <summary>As many were waiting already as may: refused at once rather than held.</summary>
    TooManyWaiting,

    /// <summary>No turn came within the wait's limit.</summary>
    TimedOut,
}

/// <summary>
/// Work that takes turns: at most <paramref name="atOnce"/> hold a turn, at most <paramref name="waiting"/> wait for one (first come,
/// first served), each for a bounded time. A server puts its costly work behind it so that what it holds follows the turns, not the
/// number of requests.
/// </summary>
public sealed class Turns(int atOnce, int waiting)
{
    private readonly SemaphoreSlim _turns = new(atOnce, atOnce);
    private int _waiting;

    /// <summary>A turn, or why not; a taken turn is given back by disposing the result.</summary>
    public async Task<Turn> TakeAsync(TimeSpan limit, CancellationToken cancellationToken)
    {
        if (_turns.Wait(0, CancellationToken.None))
            return new Turn(this, TurnOutcome.Taken);
        if (Interlocked.Increment(ref _waiting) > waiting)
        {
            Interlocked.Decrement(ref _waiting);
            return new Turn(null, TurnOutcome.TooManyWaiting);
        }
        try
        {
            return await _turns.WaitAsync(limit, cancellationToken).ConfigureAwait(false)
                ? new Turn(this, TurnOutcome.Taken)
                : new Turn(null, TurnOutcome.TimedOut);
        }
        finally
        {
            Interlocked.Decrement(ref _waiting);
        }
    }

    public readonly struct Turn(Turns? owner, TurnOutcome outcome) : IDisposable
    {
        public TurnOutcome Outcome => outcome;

        public void Dispose() => owner?._turns.Release();
    }
}
