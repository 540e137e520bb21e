namespace IntegrationTasks.AsyncOverhead;

/// <summary>
/// Seed 004's subject: a price cache, asked for prices that are always cached (so an async method
/// completes synchronously) — except in the variants that really yield, to price a real await.
/// </summary>
public sealed class PriceCache
{
    private readonly Dictionary<string, decimal> _prices;

    public PriceCache(int items)
    {
        Names = Enumerable.Range(0, items).Select(i => $"item-{i}").ToArray();
        _prices = Names.Select((name, i) => (name, price: 10m + i)).ToDictionary(p => p.name, p => p.price);
    }

    public string[] Names { get; }

    public decimal GetPrice(string name) => _prices[name];

    public async Task<decimal> GetPriceAsync(string name)
    {
        if (_prices.TryGetValue(name, out var price))
            return price;
        await Task.Delay(42).ConfigureAwait(false); // the article's fake I/O; never reached for cached names
        return 0;
    }

    public async ValueTask<decimal> GetPriceValueTaskAsync(string name)
    {
        if (_prices.TryGetValue(name, out var price))
            return price;
        await Task.Delay(42).ConfigureAwait(false);
        return 0;
    }

    /// <summary>The fast path: no state machine when the answer is at hand (a ValueTask wraps the value, no allocation).</summary>
    public ValueTask<decimal> GetPriceFastPathAsync(string name) =>
        _prices.TryGetValue(name, out var price) ? new ValueTask<decimal>(price) : new ValueTask<decimal>(SlowAsync());

    private static async Task<decimal> SlowAsync()
    {
        await Task.Delay(42).ConfigureAwait(false);
        return 0;
    }

    /// <summary>An await that really waits (the continuation is queued): the article's ≈4 µs and ≈300 bytes.</summary>
    public async Task<decimal> GetPriceYieldingAsync(string name)
    {
        await Task.Yield();
        return _prices[name];
    }

    public async ValueTask<decimal> GetPriceYieldingValueTaskAsync(string name)
    {
        await Task.Yield();
        return _prices[name];
    }
}
