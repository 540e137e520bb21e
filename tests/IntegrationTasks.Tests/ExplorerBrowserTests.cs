using PuppeteerSharp;

namespace IntegrationTasks.Tests;

/// <summary>report.html's explorer in a real browser (Debian's Chromium, headless): filters, sorting, charts and comparisons on two real RunAlls.</summary>
[TestClass]
[TestCategory("EndToEnd")]
public sealed class ExplorerBrowserTests
{
    [TestMethod]
    [Timeout(600_000, CooperativeCancellation = true)]
    public async Task The_explorer_filters_sorts_charts_and_compares_two_RunAlls_with_no_request_off_the_file_and_no_script_error()
    {
        using var artifacts = new TempDirectory("it-explorer-");
        string[] plan = ["-p:Transports=TcpClient2+PipelinedCopy", "-p:Clients=1+2", "-p:RecordCounts=2000", "-p:Repetitions=3", "-p:Warmup=false", "-p:Peers=false"];
        for (var i = 0; i < 2; i++)
        {
            var (exitCode, output) = HostingTests.RunBuild("RunAll", artifacts, plan);
            Assert.AreEqual(0, exitCode, output);
        }
        var report = Path.Combine(artifacts, "results", "report.html");
        // The second RunAll's own runs, and the first's from the database: what the page must show.
        var history = ResultsHistory.Open("Sqlite", $"Data Source={Path.Combine(artifacts, "results.db")}");
        var first = await history.LoadAsync(1, CancellationToken.None);
        var second = await history.LoadAsync(2, CancellationToken.None);
        static string MeanOf(ResultsFile results, string transport, int clients) =>
            results.Measurements.Where(m => m.Transport == transport && m.Clients == clients && !m.Warmup).Average(m => m.ElapsedSeconds)
                .ToString("N3", CultureInfo.GetCultureInfo("en-US"));

        using var profile = new TempDirectory("it-chromium-");
        // As root Chromium runs only without its sandbox; the page is the suite's own file.
        await using var browser = await Puppeteer.LaunchAsync(new LaunchOptions
        {
            ExecutablePath = "/usr/bin/chromium", Headless = true, UserDataDir = profile,
            Args = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
        });
        await using var page = await browser.NewPageAsync();
        var problems = new List<string>();
        var requests = new List<string>();
        page.Console += (_, e) => { if (e.Message.Type == ConsoleType.Error) lock (problems) problems.Add(e.Message.Text); };
        page.PageError += (_, e) => { lock (problems) problems.Add(e.Message); };
        page.Request += (_, e) => { lock (requests) requests.Add(e.Request.Url); };
        await page.SetViewportAsync(new ViewPortOptions { Width = 1280, Height = 900 });
        await page.GoToAsync(new Uri(report).AbsoluteUri);
        await page.WaitForSelectorAsync("#explorer[data-ready='true']", new WaitForSelectorOptions { Timeout = 30_000 });

        // A filter for every field of the runs' key, and the RunAll's.
        foreach (var field in IntegrationTasks.Exporters.ExplorerData.Fields)
            Assert.IsNotNull(await page.QuerySelectorAsync($"#filter-{field}"), field);
        // Both RunAlls' rows: two transports at two client counts each.
        Assert.HasCount(8, await Cells(page, "#explorer-table", "transport"));

        // Filtered to TcpClient2 of the latest RunAll, one client: one row, its mean time the runs'.
        await page.SelectAsync("#filter-transport", "TcpClient2");
        await page.SelectAsync("#filter-runAll", "2");
        CollectionAssert.AreEqual(new[] { "TcpClient2", "TcpClient2" }, await Cells(page, "#explorer-table", "transport"));
        await page.SelectAsync("#filter-clients", "1");
        CollectionAssert.AreEqual(new[] { MeanOf(second, "TcpClient2", 1) }, await Cells(page, "#explorer-table", "mean"));

        // Cleared, then sorted by time (shown fastest first), slowest first: the means in descending order.
        foreach (var field in new[] { "transport", "runAll", "clients" })
            await page.SelectAsync($"#filter-{field}");
        await page.ClickAsync("#explorer-table th[data-column='mean']");
        var means = (await Cells(page, "#explorer-table", "mean")).Select(c => double.Parse(c, CultureInfo.GetCultureInfo("en-US"))).ToList();
        Assert.HasCount(8, means);
        CollectionAssert.AreEqual(means.OrderDescending().ToList(), means);

        // The chart: records per second on a log scale, one bar a row.
        await page.SelectAsync("#explorer-metric", "recordsPerSecond");
        await page.SelectAsync("#explorer-scale", "log");
        Assert.AreEqual("Records/s", await page.EvaluateExpressionAsync<string>("document.querySelector('#explorer-chart .u-legend .u-series:nth-child(2) .u-label').textContent"));
        Assert.AreEqual(1, await page.EvaluateExpressionAsync<int>("document.querySelectorAll('#explorer-chart canvas').length"));
        await page.SelectAsync("#explorer-view", "history");
        Assert.AreEqual(1, await page.EvaluateExpressionAsync<int>("document.querySelectorAll('#explorer-chart canvas').length"));

        // Two settings of one field, 1 against 2 clients: each row's two means are the runs', its verdict one of the three.
        await page.SelectAsync("#compare-field", "clients");
        await page.SelectAsync("#compare-a", "1");
        await page.SelectAsync("#compare-b", "2");
        Assert.HasCount(4, await Cells(page, "#compare-table", "row"));
        await page.SelectAsync("#filter-runAll", "2");
        await page.SelectAsync("#filter-transport", "TcpClient2");
        CollectionAssert.AreEqual(new[] { MeanOf(second, "TcpClient2", 1) }, await Cells(page, "#compare-table", "a"));
        CollectionAssert.AreEqual(new[] { MeanOf(second, "TcpClient2", 2) }, await Cells(page, "#compare-table", "b"));
        CollectionAssert.IsSubsetOf(await Cells(page, "#compare-table", "verdict"), new[] { "slower", "faster", "no significant change" });

        // Two RunAlls: the first's mean against the second's for the same row (the RunAll filter left on: a compared field's own
        // filter does not apply to the comparison).
        await page.SelectAsync("#filter-clients", "2");
        await page.SelectAsync("#compare-field", "runAll");
        await page.SelectAsync("#compare-a", "1");
        await page.SelectAsync("#compare-b", "2");
        CollectionAssert.AreEqual(new[] { MeanOf(first, "TcpClient2", 2) }, await Cells(page, "#compare-table", "a"));
        CollectionAssert.AreEqual(new[] { MeanOf(second, "TcpClient2", 2) }, await Cells(page, "#compare-table", "b"));
        var change = (await Cells(page, "#compare-table", "change")).Single();
        StringAssert.EndsWith(change, " %");

        await page.ScreenshotAsync(Path.Combine(artifacts, "explorer.png"));
        Assert.IsEmpty(problems, string.Join("\n", problems));
        Assert.IsTrue(requests.All(r => r.StartsWith("file://", StringComparison.Ordinal) || r.StartsWith("data:", StringComparison.Ordinal)), string.Join("\n", requests));
    }

    /// <summary>The text of one column's cells, in the order shown.</summary>
    private static Task<string[]> Cells(IPage page, string table, string column) =>
        page.EvaluateExpressionAsync<string[]>($"Array.from(document.querySelectorAll(\"{table} tbody td[data-column='{column}']\")).map(td => td.textContent)");
}
