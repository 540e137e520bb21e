namespace IntegrationTasks.Tests;

/// <summary>One part of the report as blocks, rendered by each format: the HTML is made from the blocks, never from the Markdown.</summary>
[TestClass]
[TestCategory("Unit")]
public sealed class ReportDocumentTests
{
    private static readonly IReadOnlyList<ReportColumn<(string Name, int Value)>> Columns =
    [
        new("name", "Name", r => r.Name, Numeric: false), new("value", "Value", r => r.Value.ToString(System.Globalization.CultureInfo.InvariantCulture)),
    ];

    private static ReportDocument Document() => new ReportDocument().AddHeading(1, "Results").AddBullets(["Machine: two cores"])
        .AddHeading(2, "1,000 records").AddTable(Columns, [("a|b", 1), ("<c>", 22)]).AddParagraph("Why: **this**.").AddParagraph("").AddBullets([]);

    [TestMethod]
    public void Markdown_puts_one_blank_line_between_blocks_and_escapes_a_cell_s_bar()
    {
        Assert.AreEqual("# Results\n\n- Machine: two cores\n\n## 1,000 records\n\n| Name | Value |\n|---|---:|\n| a\\|b | 1 |\n| <c> | 22 |\n\nWhy: **this**.\n",
            Document().Markdown());
        // Rendered after other text: a blank line first, unless the text already ends with one.
        Assert.AreEqual("\n## S\n\n", new ReportDocument().AddHeading(2, "S").Markdown(before: "x\n"));
        Assert.AreEqual("## S\n\n", new ReportDocument().AddHeading(2, "S").Markdown(before: "x\n\n"));
    }

    [TestMethod]
    public void Html_renders_the_same_blocks_with_headings_moved_down_and_text_escaped()
    {
        var html = Document().Html(headingOffset: 1);
        Assert.AreEqual(("<h2>Results</h2>", "<h3>1,000 records</h3>"), (html[..16], html.Substring(html.IndexOf("<h3>", StringComparison.Ordinal), 22)));
        StringAssert.Contains(html, "<td>a|b</td><td>1</td>");
        StringAssert.Contains(html, "<td>&lt;c&gt;</td><td>22</td>");
        StringAssert.Contains(html, "<p class=\"note\">Why: this.</p>");
        Assert.AreEqual(1, html.Split("<p ").Length - 1, "an empty paragraph and an empty list are no blocks");
        Assert.IsTrue(new ReportDocument().AddParagraph("\n").IsEmpty);
    }
}
