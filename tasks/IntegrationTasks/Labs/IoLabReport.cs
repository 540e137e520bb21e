using System.Globalization;
using IntegrationTasks.Results;

namespace IntegrationTasks.Labs;

/// <summary>IoLab's results file (iolab.json beside the transports' results) and its report sections.</summary>
public static class IoLabReport
{
    public const string FileName = "iolab.json";
    private static readonly CultureInfo Invariant = CultureInfo.InvariantCulture;

    public sealed record Run(IoLabOptions Options, IReadOnlyList<IoLabResult> Results, DateTimeOffset At);

    public static void Save(string directory, Run run) => LabResults.Save(directory, FileName, run);

    public static Run? Load(string directory) => LabResults.Load<Run>(directory, FileName);

    private static readonly IReadOnlyList<ReportColumn<IoLabResult>> Columns =
    [
        new("mode", "Mode", r => r.Mode.ToString(), Numeric: false),
        new("totalMs", "Total (ms)", r => r.TotalMilliseconds.ToString("N0", Invariant)),
        new("iterationMs", "Per iteration (ms, mean)", r => r.IterationMilliseconds.Average().ToString("N0", Invariant)),
        new("articleMs", "Article, 2014 (ms)", r => r.ArticleMilliseconds.ToString("N0", Invariant)),
        new("bytesWritten", "Written per iteration", r => r.BytesWritten.ToString("N0", Invariant) + " B"),
        new("sorted", "Sorted", r => r.Sorted ? "yes" : "**no**", Numeric: false),
    ];

    public static ReportDocument Document(Run run)
    {
        var o = run.Options;
        return new ReportDocument()
            .AddHeading(2, string.Create(Invariant,
                $"IoLab: {o.Iterations} × (write {o.FileBytes / 1048576.0:N0} MB flushed to the device + bubble sort of {o.SortItems:N0} reversed items)"))
            .AddTable(Columns, run.Results, ReportFormats.Markdown)
            .AddParagraph("""
                The article's figures are for 10 × 100 MB on its 2014 Windows machine. Here every write ends with an fsync (FileStream.Flush(true)),
                and .NET on Linux has no kernel-asynchronous file I/O: an "asynchronous" write is a blocking pwrite on a thread-pool thread. Both
                overlapped modes therefore overlap by running the write on a second thread while this one sorts; the sum of write and sort becomes
                roughly the longer of the two (on a machine with at least two cores).
                """, ReportFormats.Markdown)
            .AddChart(new ReportBarChart("iolab", "Total time (ms): here, and the article's 2014 figure",
                [.. run.Results.SelectMany(r => new[] { new ReportBar($"{r.Mode} (here)", r.TotalMilliseconds), new ReportBar($"{r.Mode} (2014)", r.ArticleMilliseconds, Baseline: true) })],
                "N0"));
    }
}
