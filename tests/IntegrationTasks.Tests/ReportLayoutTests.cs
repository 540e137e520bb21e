namespace IntegrationTasks.Tests;

/// <summary>The report leads with its findings, keeps its first table narrow, and keeps its charts readable whatever the spread.</summary>
[TestClass]
[TestCategory("Unit")]
public sealed class ReportLayoutTests
{
    private static IEnumerable<Measurement> Runs(string transport, params double[] seconds) =>
        seconds.Select((s, i) => new Measurement { Transport = transport, Records = 20_000, BatchSize = 1000, Repetition = i + 1, ElapsedSeconds = s, Verified = true });

    private static (string Markdown, string Html) Report(IEnumerable<Measurement> runs, IReadOnlyList<FailedEntry>? failed = null)
    {
        using var folder = new TempDirectory("it-layout-");
        IntegrationTasks.Exporters.ReportFiles.Write(folder, runs.ToList(), new Dictionary<string, string> { ["CPU"] = "test" },
            new ReportOptions { NotRun = [new NotRunEntry("MSMQ", "Windows only.", "", "836.12", "RabbitMQDurable")], Failed = failed ?? [] });
        return (File.ReadAllText(Path.Combine(folder, "results.md")), File.ReadAllText(Path.Combine(folder, "report.html")));
    }

    [TestMethod]
    public void The_page_opens_on_the_size_most_transports_ran_at_and_says_a_cap_as_a_cap()
    {
        static IEnumerable<Measurement> At(int records, string transport, params double[] seconds) =>
            seconds.Select((s, i) => new Measurement { Transport = transport, Records = records, BatchSize = 1000, Repetition = i + 1, ElapsedSeconds = s, Verified = true });
        // 5,000 records: only the one-call-per-record transport (and the reference); 20,000: the main comparison.
        var runs = At(5000, "PipelinedCopy", 0.2, 0.2, 0.2).Concat(At(5000, "SoapSmallRequests", 2.0, 2.1, 1.9))
            .Concat(At(20_000, "PipelinedCopy", 1.0, 1.1, 0.9)).Concat(At(20_000, "GrpcClient", 1.2, 1.3, 1.1)).Concat(At(20_000, "HttpRequest", 2.4, 2.6, 2.5)).ToList();
        using var folder = new TempDirectory("it-layout-");
        IntegrationTasks.Exporters.ReportFiles.Write(folder, runs, new Dictionary<string, string> { ["CPU"] = "test" }, new ReportOptions
        {
            NotRun =
            [
                new NotRunEntry("SoapSmallRequests at 20,000 records", "One call per record.", "-p:SmallRequestsMaxRecords=20000", "", "") { Cap = ("SoapSmallRequests", 5000) },
                new NotRunEntry("MSMQ", "Windows only.", "", "836.12", "RabbitMQDurable"),
            ],
        });
        var markdown = File.ReadAllText(Path.Combine(folder, "results.md"));
        var html = File.ReadAllText(Path.Combine(folder, "report.html"));
        Assert.IsLessThan(html.IndexOf("<table id=\"summary-5000\"", StringComparison.Ordinal), html.IndexOf("<table id=\"summary-20000\"", StringComparison.Ordinal));
        Assert.IsLessThan(markdown.IndexOf("- 5,000 records", StringComparison.Ordinal), markdown.IndexOf("- 20,000 records: ", StringComparison.Ordinal));
        Assert.AreEqual("SoapSmallRequests make one call per record and ran up to 5,000 records, not at the larger counts (see \"Not run\" to raise the cap).",
            MarkdownTable.Bullet(markdown, "Capped"));
        Assert.AreEqual("MSMQ — see \"Not run\" for why and how.", MarkdownTable.Bullet(markdown, "Not run"));
        // No chart of the client's peak memory (the build's process, alike for every row).
        Assert.DoesNotContain("Peak memory of the client process", html);
    }

    [TestMethod]
    public void The_findings_come_first_with_the_fastest_transport_and_its_ratios()
    {
        var (markdown, html) = Report(Runs("PipelinedCopy", 1.0, 1.1, 0.9).Concat(Runs("GrpcClient", 1.2, 1.3, 1.1))
            .Concat(Runs("HttpRequest", 2.4, 2.6, 2.5)).Concat(Runs("Peer: SQLite ATTACH", 0.1, 0.1, 0.1)),
            [new FailedEntry("TcpClient2", 20_000, "IT4001", "Port 8081 on 127.0.0.1 is already in use.")]);
        StringAssert.StartsWith(markdown, "# IntegrationTasks results\n\n## Findings\n\n- 20,000 records: ");
        var fastest = MarkdownTable.Bullet(markdown, "20,000 records");
        StringAssert.StartsWith(fastest, "fastest transport GrpcClient, 1.200 ±0.248 s");
        foreach (var figure in new[] { "1.20× PipelinedCopy", "12.0× Peer: SQLite ATTACH", "slowest HttpRequest, 2.1× the fastest" })
            StringAssert.Contains(fastest, figure);
        StringAssert.StartsWith(MarkdownTable.Bullet(markdown, "Failed"), "TcpClient2 at 20,000 records (IT4001)");
        StringAssert.StartsWith(MarkdownTable.Bullet(markdown, "Not run"), "MSMQ");
        Assert.IsLessThan(markdown.IndexOf("- Not run: ", StringComparison.Ordinal), markdown.IndexOf("- Failed: ", StringComparison.Ordinal), "the fastest, then failed, then not run");
        Assert.IsLessThan(html.IndexOf("<details id=\"environment\">", StringComparison.Ordinal), html.IndexOf("<section id=\"findings\">", StringComparison.Ordinal));
        Assert.IsLessThan(html.IndexOf("<table id=\"summary-20000\"", StringComparison.Ordinal), html.IndexOf("<table id=\"failed\">", StringComparison.Ordinal));
        Assert.AreEqual(1, CountOf(html, "Not run</h2>"), "one not-run section");
    }

    [TestMethod]
    public void Without_PipelinedCopy_the_findings_say_why_no_cost_can_be_told()
    {
        var (markdown, _) = Report(Runs("GrpcClient", 1.2, 1.3, 1.1));
        var fastest = MarkdownTable.Bullet(markdown, "20,000 records");
        StringAssert.Contains(fastest, "PipelinedCopy was not in this run");
        StringAssert.Contains(fastest, "(add it to -p:Transports)");
    }

    [TestMethod]
    public void The_first_table_has_the_eight_columns_a_reader_looks_at_first()
    {
        var (_, html) = Report(Runs("PipelinedCopy", 1.0, 1.1, 0.9).Concat(Runs("GrpcClient", 1.2, 1.3, 1.1)));
        var table = html[html.IndexOf("<table id=\"summary-20000\"", StringComparison.Ordinal)..];
        table = table[..(table.IndexOf("</table>", StringComparison.Ordinal) + 8)];
        Assert.AreEqual(8, CountOf(table[..table.IndexOf("</tr>", StringComparison.Ordinal)], "<th>"));
        var grpcRow = table[table.IndexOf("<tr><td>GrpcClient</td>", StringComparison.Ordinal)..];
        var cells = System.Text.RegularExpressions.Regex.Matches(grpcRow[..grpcRow.IndexOf("</tr>", StringComparison.Ordinal)], "<td>([^<]*)</td>")
            .Select(m => m.Groups[1].Value).ToArray();
        CollectionAssert.AreEqual(new[] { "GrpcClient", "1.200", "0.248", "16,667", "1.20" }, cells[..5]);
    }

    [TestMethod]
    public void A_peer_is_written_beside_the_charts_and_a_spread_over_20x_gets_a_log_axis()
    {
        var (_, html) = Report(Runs("PipelinedCopy", 1.0, 1.1, 0.9).Concat(Runs("SoapSmallRequests", 60, 61, 62)).Concat(Runs("Peer: SQLite ATTACH", 0.01, 0.01, 0.01)));
        var time = html[html.IndexOf("<svg id=\"time-20000\"", StringComparison.Ordinal)..];
        time = time[..time.IndexOf("</figure>", StringComparison.Ordinal)];
        Assert.DoesNotContain("Peer: SQLite ATTACH", time, "the peer is not drawn");
        StringAssert.Contains(time, "(log scale: the values span 61&#215;)");
        StringAssert.Contains(html, "Beside the chart, not drawn");
        StringAssert.Contains(html, "on another scale): Peer: SQLite ATTACH: 0.010.");
        // Log scale: the fast bar is still a visible bar, not a sliver (wider than a tenth of the plot).
        var widths = System.Text.RegularExpressions.Regex.Matches(time, "<rect class=\"bar[^\"]*\" data-transport=\"[^\"]+\" x=\"\\d+\" y=\"[\\d.]+\" width=\"([\\d.]+)\"")
            .Select(m => double.Parse(m.Groups[1].Value, System.Globalization.CultureInfo.InvariantCulture)).ToList();
        Assert.IsGreaterThan(64.0, widths.Min(), string.Join(", ", widths));
    }

    private static int CountOf(string text, string part) => (text.Length - text.Replace(part, "").Length) / part.Length;
}
