namespace IntegrationTasks.Common;

/// <summary>
/// An asynchronous semaphore counted in units (records in flight on a connection, say): a taker waits until its whole weight
/// fits, first come first served, so a large request is never starved by small ones. A weight above the capacity is taken as
/// the capacity (it then waits for everything else to be given back).
/// </summary>
public sealed class WeightedBudget(int capacity)
{
    private readonly LinkedList<Waiter> _waiting = [];
    private int _available = capacity;

    public int Capacity { get; } = capacity;

    /// <summary>How much is free now (for tests and logs).</summary>
    public int Available
    {
        get
        {
            lock (_waiting)
                return _available;
        }
    }

    public async ValueTask<Lease> TakeAsync(int weight, CancellationToken cancellationToken)
    {
        weight = Math.Clamp(weight, 0, Capacity);
        Waiter waiter;
        lock (_waiting)
        {
            if (_waiting.Count == 0 && _available >= weight)
            {
                _available -= weight;
                return new Lease(this, weight);
            }
            waiter = new Waiter(weight);
            waiter.Node = _waiting.AddLast(waiter);
        }
        await using (cancellationToken.Register(() => Abandon(waiter, cancellationToken)).ConfigureAwait(false))
            await waiter.Granted.Task.ConfigureAwait(false);
        return new Lease(this, weight);
    }

    private void Abandon(Waiter waiter, CancellationToken cancellationToken)
    {
        lock (_waiting)
        {
            if (waiter.Node?.List is null)
                return; // granted already: the lease will give it back
            _waiting.Remove(waiter.Node);
            GrantWaiting(); // the next in line may fit now that this one stands aside
        }
        waiter.Granted.TrySetCanceled(cancellationToken);
    }

    private void Give(int weight)
    {
        lock (_waiting)
        {
            _available += weight;
            GrantWaiting();
        }
    }

    private void GrantWaiting()
    {
        while (_waiting.First is { } first && first.Value.Weight <= _available)
        {
            _available -= first.Value.Weight;
            _waiting.RemoveFirst();
            first.Value.Granted.TrySetResult();
        }
    }

    private sealed class Waiter(int weight)
    {
        public int Weight { get; } = weight;
        public LinkedListNode<Waiter>? Node { get; set; }
        public TaskCompletionSource Granted { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);
    }

    /// <summary>What was taken; disposing gives it back (once).</summary>
    public sealed class Lease(WeightedBudget budget, int weight) : IDisposable
    {
        private int _returned;

        public int Weight { get; } = weight;

        public void Dispose()
        {
            if (Interlocked.Exchange(ref _returned, 1) == 0)
                budget.Give(Weight);
        }
    }
}
