using BenchmarkDotNet.Attributes;

namespace IntegrationTasks.AsyncOverhead;

/// <summary>Each benchmark asks for all 100 prices (the article's Count = 100); figures are per call.</summary>
[MemoryDiagnoser]
public class PriceBenchmarks
{
    public const int Items = 100;
    private readonly PriceCache _cache = new(Items);

    [Benchmark(Baseline = true, OperationsPerInvoke = Items)]
    public decimal Sync()
    {
        decimal sum = 0;
        foreach (var name in _cache.Names)
            sum += _cache.GetPrice(name);
        return sum;
    }

    [Benchmark(OperationsPerInvoke = Items)]
    public decimal SyncOverAsync()
    {
        decimal sum = 0;
        foreach (var name in _cache.Names)
            sum += _cache.GetPriceAsync(name).GetAwaiter().GetResult(); // what the lab measures, not what to do
        return sum;
    }

    [Benchmark(OperationsPerInvoke = Items)]
    public async Task<decimal> AsyncTask()
    {
        decimal sum = 0;
        foreach (var name in _cache.Names)
            sum += await _cache.GetPriceAsync(name);
        return sum;
    }

    [Benchmark(OperationsPerInvoke = Items)]
    public async Task<decimal> AsyncValueTask()
    {
        decimal sum = 0;
        foreach (var name in _cache.Names)
            sum += await _cache.GetPriceValueTaskAsync(name);
        return sum;
    }

    [Benchmark(OperationsPerInvoke = Items)]
    public async Task<decimal> FastPath()
    {
        decimal sum = 0;
        foreach (var name in _cache.Names)
            sum += await _cache.GetPriceFastPathAsync(name);
        return sum;
    }

    [Benchmark(OperationsPerInvoke = Items)]
    public async Task<decimal> AwaitYielding()
    {
        decimal sum = 0;
        foreach (var name in _cache.Names)
            sum += await _cache.GetPriceYieldingAsync(name);
        return sum;
    }

    [Benchmark(OperationsPerInvoke = Items)]
    public async Task<decimal> AwaitYieldingValueTask()
    {
        decimal sum = 0;
        foreach (var name in _cache.Names)
            sum += await _cache.GetPriceYieldingValueTaskAsync(name);
        return sum;
    }
}
