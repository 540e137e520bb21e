namespace IntegrationTasks.Tests;

[TestClass]
[TestCategory("Unit")]
public sealed class IoLabTests
{
    [TestMethod]
    public void Bubble_sort_sorts_the_reversed_array()
    {
        var items = IoLab.Reversed(1000);
        Assert.IsFalse(IoLab.IsAscending(items));
        IoLab.BubbleSort(items);
        CollectionAssert.AreEqual(Enumerable.Range(0, 1000).ToArray(), items);
    }

    [TestMethod]
    [DataRow(IoMode.Synchronous)]
    [DataRow(IoMode.Callback)]
    [DataRow(IoMode.AsyncAwait)]
    public async Task Each_mode_writes_the_whole_file_and_sorts(IoMode mode)
    {
        using var iolab = new TempDirectory("it-iolab-");
        var options = new IoLabOptions
        {
            Directory = iolab, Iterations = 3, FileBytes = 3 * 1024 * 1024 + 123,
            SortItems = 500, ChunkBytes = 64 * 1024, KeepFiles = true,
        };
        var lab = new IoLab(options);
        var result = await lab.RunAsync(mode, CancellationToken.None);
        Assert.AreEqual(options.FileBytes, result.BytesWritten);
        Assert.IsTrue(result.Sorted);
        Assert.HasCount(3, result.IterationMilliseconds);
        var bytes = await File.ReadAllBytesAsync(lab.PathOf(mode));
        Assert.AreEqual(options.FileBytes, bytes.LongLength);
        var pattern = IoLab.Pattern(options.ChunkBytes);
        for (var i = 0; i < bytes.Length; i++)
        {
            if (bytes[i] != pattern[i % options.ChunkBytes])
                Assert.Fail($"{mode}: byte {i} is {bytes[i]}, expected {pattern[i % options.ChunkBytes]}");
        }
    }

    [TestMethod]
    public void The_task_records_its_results_and_the_report_shows_them_beside_the_articles()
    {
        using var results = new TempDirectory("it-iolab-results-");
        using var iolab = new TempDirectory("it-iolab-");
        var engine = new FakeBuildEngine();
        var task = new IoLabTask
        {
            BuildEngine = engine, Directory = iolab, ResultsDirectory = results,
            Iterations = 2, FileMegabytes = 1, SortItems = 300,
        };
        Assert.IsTrue(task.Execute(), engine.Log);
        var run = IoLabReport.Load(results);
        Assert.IsNotNull(run);
        CollectionAssert.AreEqual(Enum.GetValues<IoMode>(), run.Results.Select(r => r.Mode).ToArray());

        var files = IntegrationTasks.Exporters.ReportFiles.Write(results, [], new Dictionary<string, string>());
        var markdown = File.ReadAllText(Path.Combine(results, "results.md"));
        StringAssert.Contains(markdown, "## IoLab: 2 × (write 1 MB flushed to the device");
        var table = MarkdownTable.With(markdown, "Article, 2014 (ms)");
        CollectionAssert.AreEqual(new[] { "21,781", "9,111", "13,835" },
            Enum.GetValues<IoMode>().Select(m => table.Cell(m.ToString(), "Article, 2014 (ms)")).ToArray());
        Assert.IsTrue(Enum.GetValues<IoMode>().All(m => table.Cell(m.ToString(), "Sorted") == "yes"));
        StringAssert.Contains(File.ReadAllText(Path.Combine(results, "report.html")), "<svg id=\"iolab\"");
        Assert.HasCount(5, files);
    }
}
