using IntegrationTasks.AsyncOverhead;

namespace IntegrationTasks.Tests;

[TestClass]
[TestCategory("Unit")]
public sealed class AsyncOverheadTests
{
    [TestMethod]
    public async Task Every_variant_of_the_price_cache_answers_the_same_prices()
    {
        var benchmarks = new PriceBenchmarks();
        var expected = Enumerable.Range(0, PriceBenchmarks.Items).Sum(i => 10m + i);
        Assert.AreEqual(expected, benchmarks.Sync());
        Assert.AreEqual(expected, benchmarks.SyncOverAsync());
        Assert.AreEqual(expected, await benchmarks.AsyncTask());
        Assert.AreEqual(expected, await benchmarks.AsyncValueTask());
        Assert.AreEqual(expected, await benchmarks.FastPath());
        Assert.AreEqual(expected, await benchmarks.AwaitYielding());
        Assert.AreEqual(expected, await benchmarks.AwaitYieldingValueTask());
    }

    [TestMethod]
    public void The_fast_path_completes_synchronously_and_the_yielding_variant_does_not()
    {
        var cache = new PriceCache(3);
        Assert.IsTrue(cache.GetPriceFastPathAsync("item-1").IsCompletedSuccessfully);
        Assert.IsTrue(cache.GetPriceAsync("item-1").IsCompletedSuccessfully);
        var yielding = cache.GetPriceYieldingAsync("item-1");
        Assert.AreEqual(11m, yielding.GetAwaiter().GetResult());
    }

    [TestMethod]
    public void BenchmarkDotNets_report_is_read_and_shown_beside_the_article()
    {
        const string json = """
            {"Title":"x","Benchmarks":[
              {"Method":"Sync","Statistics":{"Mean":8.5,"ConfidenceInterval":{"Margin":0.24}},"Memory":{"BytesAllocatedPerOperation":0}},
              {"Method":"AsyncTask","Statistics":{"Mean":22.6,"ConfidenceInterval":{"Margin":6.8}},"Memory":{"BytesAllocatedPerOperation":80}}]}
            """;
        var results = AsyncOverheadReport.ParseBenchmarkDotNet(json);
        Assert.HasCount(2, results);
        Assert.AreEqual(80, results[1].BytesPerCall);
        var markdown = AsyncOverheadReport.Document(results).Markdown();
        var row = MarkdownTable.With(markdown, "ns / call").Row("AsyncTask");
        Assert.AreEqual(("22.60", "6.80", "2.66", "80", "≈ +15% over sync; 88 B per Task<T>"),
            (row["ns / call"], row["± (99.9% CI)"], row["× Sync"], row["Bytes / call"], row["The article"]));
        StringAssert.Contains(AsyncOverheadReport.Document(results).Html(charts: IntegrationTasks.Exporters.SvgCharts.Instance), "<svg id=\"async-alloc\"");

        var e = Assert.ThrowsExactly<IntegrationException>(() => AsyncOverheadReport.ParseBenchmarkDotNet("{\"nothing\":1}"));
        Assert.AreEqual(ErrorCodes.ResultsUnreadable, e.Code);
    }
}
