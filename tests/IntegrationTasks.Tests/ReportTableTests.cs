namespace IntegrationTasks.Tests;

/// <summary>A report column is declared once: its value, and the same column in the Markdown, CSV and HTML tables.</summary>
[TestClass]
[TestCategory("Unit")]
public sealed class ReportTableTests
{
    private static Measurement Run(string transport, double seconds, int repetition) => new()
    {
        Transport = transport, Records = 1000, BatchSize = 100, ElapsedSeconds = seconds, Repetition = repetition, Verified = true,
        Provider = "Sqlite", ClientPeakBytes = 64L << 20,
    };

    private static string Value<TRow>(IReadOnlyList<ReportColumn<TRow>> columns, string id, TRow row) => columns.Single(c => c.Id == id).Cell(row);

    [TestMethod]
    public void A_column_gives_one_value_to_every_writer()
    {
        var summaries = ReportContent.Summarise([Run("TcpClient2", 1.0, 1), Run("TcpClient2", 1.2, 2), Run("PipelinedCopy", 0.5, 1), Run("PipelinedCopy", 0.5, 2)]);
        var rows = ReportContent.Ranked(summaries).ToList();
        var tcp = rows.Single(r => r.Summary.Transport == "TcpClient2");
        Assert.AreEqual("1.100", Value(ReportColumns.Summary, "meanSeconds", tcp));
        Assert.AreEqual("2.20", Value(ReportColumns.Summary, "ratioToPipelinedCopy", tcp));
        Assert.AreEqual("600.00 (no interval)", Value(ReportColumns.Summary, "overheadMicrosPerRecord", tcp), "(1.1 − 0.5) s / 1,000 records; two runs give no interval");
        Assert.AreEqual("", Value(ReportColumns.Summary, "percentSlower", rows[0]), "the fastest has no '% slower'");
        Assert.AreEqual("64", Value(ReportColumns.Summary, "clientPeakMB", tcp));

        // The same columns make every table: a header per column, a cell per column in each row.
        var markdown = ReportTable.Markdown(ReportColumns.Summary, rows).Split('\n');
        Assert.AreEqual(ReportColumns.Summary.Count + 2, markdown[0].Split('|').Length, "a Markdown header cell per column");
        StringAssert.StartsWith(markdown[1], "|---|---|---|---:|", "text left (method, reads, encoding), numbers right");
        var html = ReportTable.Html(ReportColumns.SummaryAtAGlance, rows);
        Assert.AreEqual(ReportColumns.SummaryAtAGlance.Count, html.Split("<th>").Length - 1);
        StringAssert.Contains(html, "<th>Overhead µs/record</th>", "the narrow page's header");
        var csv = ReportContent.Csv([Run("TcpClient2", 1.0, 1)], [new FailedEntry("GrpcClient", 1000, "IT3003", "no \"server\"")]).Split('\n');
        CollectionAssert.AreEqual(ReportColumns.Csv.Select(c => c.Id).ToArray(), csv[0].Split(','));
        Assert.AreEqual("1", csv[1].Split(',')[Index("repetition")]);
        var failed = csv[2].Split(',');
        Assert.AreEqual(ReportColumns.Csv.Count, failed.Length, "a failure fills the same columns");
        Assert.AreEqual("IT3003", failed[Index("failedWith")]);
        Assert.AreEqual("\"no \"\"server\"\"\"", failed[Index("message")]);

        static int Index(string id) => ReportColumns.Csv.Select(c => c.Id).ToList().IndexOf(id);
    }
}
