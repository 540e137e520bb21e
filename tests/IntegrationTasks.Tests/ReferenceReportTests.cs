namespace IntegrationTasks.Tests;

/// <summary>How the report puts transports against PipelinedCopy and the peer.</summary>
[TestClass]
[TestCategory("Unit")]
public sealed class ReferenceReportTests
{
    private static Measurement Run(string transport, double seconds, int repetition, string work = "PerRecord") => new()
    {
        Transport = transport, Records = 100_000, BatchSize = 1000, Repetition = repetition, ElapsedSeconds = seconds, ServerWork = work, Verified = true,
    };

    [TestMethod]
    public void Overhead_is_the_difference_to_PipelinedCopy_per_record_with_a_Welch_interval()
    {
        Measurement[] runs =
        [
            Run("PipelinedCopy", 1.0, 1), Run("PipelinedCopy", 1.2, 2), Run("PipelinedCopy", 1.1, 3),
            Run("TcpClient2", 1.5, 1), Run("TcpClient2", 1.9, 2), Run("TcpClient2", 1.7, 3),
            Run("FileTransferRequest", 2.0, 1, "Range"), Run("FileTransferRequest", 2.0, 2, "Range"), Run("FileTransferRequest", 2.0, 3, "Range"),
            Run("Peer: SQLite ATTACH", 0.2, 1), Run("Peer: SQLite ATTACH", 0.2, 2), Run("Peer: SQLite ATTACH", 0.2, 3),
        ];
        var rows = ReportContent.Summarise(runs);
        var tcp = rows.Single(r => r.Transport == "TcpClient2");
        Assert.AreEqual(1.7 / 1.1, tcp.RatioToPipelined!.Value, 1e-9);
        Assert.AreEqual((1.7 - 1.1) / 100_000 * 1e6, tcp.OverheadMicrosPerRecord!.Value, 1e-9);
        // sd 0.2 and 0.1 over 3 runs each: se = √(0.04/3 + 0.01/3) = 0.1291; Welch df = 2.94; t(0.975, 2.94) = 3.19.
        var se = Math.Sqrt(0.04 / 3 + 0.01 / 3);
        var df = Math.Pow(se * se, 2) / (Math.Pow(0.04 / 3, 2) / 2 + Math.Pow(0.01 / 3, 2) / 2);
        Assert.AreEqual(StudentT.Quantile(0.975, df) * se / 100_000 * 1e6, tcp.OverheadCi95Micros!.Value, 1e-9);
        Assert.AreEqual(1.7 / 0.2, tcp.RatioToPeer!.Value, 1e-9);
        Assert.IsNull(rows.Single(r => r.Transport == "PipelinedCopy").OverheadMicrosPerRecord);

        // The peer is listed last and not ranked: the fastest transport is PipelinedCopy, not the peer.
        Assert.AreEqual("Peer: SQLite ATTACH", rows[^1].Transport);
        Assert.AreEqual(0, rows.Single(r => r.Transport == "PipelinedCopy").PercentSlowerThanFastest, 1e-12);

        var markdown = ReportContent.Markdown(rows, new Dictionary<string, string>());
        var main = MarkdownTable.With(markdown, "Against the one above");
        Assert.AreEqual(("range query per batch", "2.000"), (main.Cell("FileTransferRequest", "Server reads"), main.Cell("FileTransferRequest", "Mean (s)")));
        Assert.AreEqual("1.55", main.Cell("TcpClient2", "× PipelinedCopy (ratio of means)"));
        StringAssert.StartsWith(main.Cell("TcpClient2", "Transport overhead µs/record (±95% CI)"), "6.00 ±");
        var peer = MarkdownTable.With(markdown, "Peer").Row("Peer: SQLite ATTACH");
        Assert.AreEqual(("0.200", "0.000", "500,000", "8.50 (TcpClient2)", "5.50", "–"), (peer["Mean (s)"], peer["±95% CI (s)"], peer["Records/s"],
            peer["Fastest transport × peer"], peer["PipelinedCopy × peer"], peer["DirectCopy × peer"]));
        Assert.IsFalse(main.HasRow("Peer: SQLite ATTACH"), "the peer is not a row of the transports' table");
    }

    [TestMethod]
    public void Each_row_names_its_encoding_and_the_table_says_what_each_encoding_costs_over_PipelinedCopy()
    {
        using var folder = new TempDirectory("it-encodings-");
        Measurement[] runs =
        [
            .. new[] { ("PipelinedCopy", 1.0), ("GrpcClient", 1.05), ("RestJson", 1.15), ("TcpClient2", 1.2), ("HttpRequest", 1.3) }
                .SelectMany(t => Enumerable.Range(1, 3).Select(r => Run(t.Item1, t.Item2 + r * 0.001, r, "Range"))),
        ];
        IntegrationTasks.Exporters.ReportFiles.Write(folder, runs, new Dictionary<string, string>(),
            new ReportOptions { Encodings = new Dictionary<string, string> { ["GrpcClient"] = "Protobuf", ["RestJson"] = "JSON", ["TcpClient2"] = "XML", ["HttpRequest"] = "XML" } });
        var markdown = File.ReadAllText(Path.Combine(folder, "results.md"));
        var results = ResultsJson.Load(folder);
        Assert.AreEqual(("Protobuf", "JSON", "XML", null), (results.Row("GrpcClient").Encoding, results.Row("RestJson").Encoding, results.Row("HttpRequest").Encoding,
            results.Row("PipelinedCopy").Encoding));
        // Each encoding by its cheapest transport: XML's is TcpClient2's 2.00, not HttpRequest's 3.00.
        var encodings = MarkdownTable.Line(markdown, "What each encoding costs over PipelinedCopy");
        foreach (var cheapest in new[] { "Protobuf 0.50 (GrpcClient)", "JSON 1.50 (RestJson)", "XML 2.00 (TcpClient2)" })
            StringAssert.Contains(encodings, cheapest);
    }

    [TestMethod]
    public void The_findings_lead_with_the_size_most_transports_ran_at_and_a_capped_size_names_how_few_ran_there()
    {
        Measurement[] runs =
        [
            .. Enumerable.Range(1, 3).SelectMany(r => new[]
            {
                Run("PipelinedCopy", 4.0 + r * 0.01, r), Run("TcpClient2", 5.0 + r * 0.01, r), Run("GrpcClient", 5.5 + r * 0.01, r),
                Run("PipelinedCopy", 0.2 + r * 0.01, r) with { Records = 5_000 }, Run("SoapSmallRequests", 2.3 + r * 0.01, r) with { Records = 5_000 },
            }),
        ];
        var lines = ReportHeadline.Lines(ReportContent.Summarise(runs), [], [], []);
        StringAssert.StartsWith(lines[0], "100,000 records: fastest transport TcpClient2,");
        StringAssert.StartsWith(lines[1], "5,000 records (only one transport ran at this size)");
        StringAssert.Contains(lines[1], "fastest transport SoapSmallRequests,");
    }

    [TestMethod]
    public void A_transport_whose_server_reads_ranges_in_a_per_ID_run_is_measured_against_PipelinedCopyRange()
    {
        // Found by #30's benchmark on PostgreSQL: FileTransferRequest at 0.29× a PipelinedCopy that read by ID while it read ranges.
        Measurement[] runs =
        [
            .. Enumerable.Range(1, 3).SelectMany(r => new[]
            {
                Run("PipelinedCopy", 4.0 + r * 0.01, r), Run("TcpClient2", 5.0 + r * 0.01, r),
                Run("PipelinedCopyRange", 1.0 + r * 0.01, r, "Range"), Run("FileTransferRequest", 1.5 + r * 0.01, r, "Range"),
            }),
        ];
        var rows = ReportContent.Summarise(runs);
        var file = rows.Single(r => r.Transport == "FileTransferRequest");
        Assert.AreEqual("PipelinedCopyRange", file.Reference, "against the reference that reads ranges too");
        Assert.AreEqual(1.52 / 1.02, file.RatioToPipelined!.Value, 1e-9);
        Assert.AreEqual((1.52 - 1.02) / 100_000 * 1e6, file.OverheadMicrosPerRecord!.Value, 1e-9);
        var tcp = rows.Single(r => r.Transport == "TcpClient2");
        Assert.AreEqual("PipelinedCopy", tcp.Reference);
        Assert.AreEqual(5.02 / 4.02, tcp.RatioToPipelined!.Value, 1e-9);
        var range = rows.Single(r => r.Transport == "PipelinedCopyRange");
        Assert.AreEqual(1.02 / 4.02, range.RatioToPipelined!.Value, 1e-9, "a limit: its ratio is to PipelinedCopy");
        Assert.IsNull(range.OverheadMicrosPerRecord, "a limit has no overhead");
        Assert.IsTrue(range.Key.IsReference);

        Assert.AreEqual(("Range", "PipelinedCopyRange"), (rows.Single(r => r.Transport == "FileTransferRequest").ServerWork, rows.Single(r => r.Transport == "FileTransferRequest").Reference),
            "ranges, against the reference reading ranges");
        var markdown = ReportContent.Markdown(rows, new Dictionary<string, string>());
        var headline = string.Join("\n", ReportHeadline.Lines(rows, [], [], []));
        StringAssert.Contains(headline, "fastest transport FileTransferRequest, 1.520 ±0.025 s");
        StringAssert.Contains(headline, "1.49× PipelinedCopyRange");

        // Other database work than PipelinedCopy's: listed, never ranked (the default RunAll's summary called it fastest and PipelinedCopy
        // "slower" than it). The ranking starts at the fastest row that is ranked, and each row is compared with the ranked row above it.
        Assert.IsTrue(range.Unranked);
        Assert.AreEqual("reads ranges, not ranked", ReportContent.Verdict(range));
        Assert.AreEqual("fastest", ReportContent.Verdict(file));
        Assert.IsFalse(file.Unranked);
        Assert.AreEqual((5.02 / 1.52 - 1) * 100, tcp.PercentSlowerThanFastest, 1e-9);
        var ranked = ReportContent.Ranked(rows).ToList();
        Assert.AreEqual("FileTransferRequest", ranked.Single(r => r.Fastest).Summary.Transport);
        var table = MarkdownTable.With(markdown, "Against the one above");
        Assert.AreEqual("reads ranges, not ranked", table.Row("PipelinedCopyRange")["Against the one above"]);
        Assert.AreEqual("–", table.Row("PipelinedCopyRange")["% slower"]);
        Assert.AreEqual("", table.Row("FileTransferRequest")["% slower"]);

        // In a run of ranges both references do the same work: PipelinedCopyRange is ranked like any row.
        var rangeRun = ReportContent.Summarise([.. runs.Select(r => r with { ServerWork = "Range" })]);
        Assert.IsFalse(rangeRun.Any(r => r.Unranked));
        Assert.AreEqual("fastest", ReportContent.Verdict(rangeRun.Single(r => r.Transport == "PipelinedCopyRange")));
    }
}
