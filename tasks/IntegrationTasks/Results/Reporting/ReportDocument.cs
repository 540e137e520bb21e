using System.Net;
using System.Text;

namespace IntegrationTasks.Results;

/// <summary>The formats a block is shown in: a table may be the Markdown's while a chart of the same figures is the page's.</summary>
[Flags]
public enum ReportFormats
{
    Markdown = 1,
    Html = 2,
    Both = Markdown | Html,
}

/// <summary>One bar of a chart: its label, value, the interval drawn as a whisker, and whether it is the baseline (drawn apart).</summary>
public sealed record ReportBar(string Label, double Value, double Interval = 0, bool Baseline = false);

/// <summary>One line of a chart: its name and its points (x, y).</summary>
public sealed record ReportSeries(string Name, IReadOnlyList<(double X, double Y)> Points);

/// <summary>A horizontal bar chart's data, its values written in <paramref name="Format"/>.</summary>
public sealed record ReportBarChart(string Id, string Title, IReadOnlyList<ReportBar> Bars, string Format);

/// <summary>A line chart's data: one line a series over a common x axis.</summary>
public sealed record ReportLineChart(string Id, string Title, IReadOnlyList<ReportSeries> Lines);

/// <summary>What draws a document's charts (the HTML exporter's SVG): the results layer holds their data only.</summary>
public interface IReportCharts
{
    string Bars(ReportBarChart chart);

    string Lines(ReportLineChart chart);
}

/// <summary>
/// A part of the report as blocks — headings, paragraphs, bullet lists, tables and charts — that each format renders: results.md and
/// report.html's figures are made from the same blocks, so the HTML never reads the Markdown. A table holds its columns and rows, a
/// chart its data, rendered only when an exporter asks (<see cref="Markdown"/>, <see cref="Html"/>): the model holds no Markdown or HTML.
/// </summary>
public sealed class ReportDocument
{
    private abstract record Block(ReportFormats Formats = ReportFormats.Both);
    private sealed record Heading(int Level, string Text) : Block;
    private sealed record Paragraph(string Text, ReportFormats Only) : Block(Only);
    private sealed record Bullets(IReadOnlyList<string> Items) : Block;
    private sealed record Chart(object Data) : Block(ReportFormats.Html);
    private abstract record Table(ReportFormats Only) : Block(Only)
    {
        public abstract string Markdown();
        public abstract string Html();
    }

    private sealed record Table<TRow>(IReadOnlyList<ReportColumn<TRow>> Columns, IReadOnlyList<TRow> Rows, ReportFormats Only) : Table(Only)
    {
        public override string Markdown() => ReportTable.Markdown(Columns, Rows);
        public override string Html() => "<div class=\"wide\">" + ReportTable.Html(Columns, Rows) + "</div>";
    }

    private readonly List<Block> _blocks = [];

    public bool IsEmpty => _blocks.Count == 0;

    public ReportDocument AddHeading(int level, string text) => Add(new Heading(level, text));

    /// <summary>Prose, without markup (a line break inside is a space on the page).</summary>
    public ReportDocument AddParagraph(string text, ReportFormats only = ReportFormats.Both) =>
        text.Trim('\n') is { Length: > 0 } trimmed ? Add(new Paragraph(trimmed, only)) : this;

    public ReportDocument AddBullets(IEnumerable<string> items) => items.ToList() is { Count: > 0 } list ? Add(new Bullets(list)) : this;

    /// <summary>A table of <paramref name="columns"/> over <paramref name="rows"/>, as each format renders them (<see cref="ReportTable"/>).</summary>
    public ReportDocument AddTable<TRow>(IReadOnlyList<ReportColumn<TRow>> columns, IEnumerable<TRow> rows, ReportFormats only = ReportFormats.Both) =>
        Add(new Table<TRow>(columns, [.. rows], only));

    /// <summary>A bar chart, on the page only (results.md has the table of the same figures).</summary>
    public ReportDocument AddChart(ReportBarChart chart) => Add(new Chart(chart));

    /// <summary>A line chart, on the page only.</summary>
    public ReportDocument AddChart(ReportLineChart chart) => Add(new Chart(chart));

    public ReportDocument Append(ReportDocument other)
    {
        _blocks.AddRange(other._blocks);
        return this;
    }

    private ReportDocument Add(Block block)
    {
        _blocks.Add(block);
        return this;
    }

    /// <summary>
    /// As Markdown: each block after a blank line (none where the text so far ends with one), a heading followed by one, a
    /// paragraph, a list or a table ending its last line.
    /// </summary>
    public string Markdown(string before = "")
    {
        var md = new StringBuilder(before);
        foreach (var block in _blocks.Where(b => b.Formats.HasFlag(ReportFormats.Markdown)))
        {
            if (md.Length > 0 && !(md.Length >= 2 && md[^1] == '\n' && md[^2] == '\n'))
                md.Append('\n');
            md.Append(block switch
            {
                Heading h => $"{new string('#', h.Level)} {h.Text}\n\n",
                Paragraph p => p.Text + "\n",
                Bullets b => string.Concat(b.Items.Select(i => $"- {i}\n")),
                Table t => t.Markdown(),
                _ => throw new InvalidOperationException(block.GetType().Name),
            });
        }
        return md.ToString()[before.Length..];
    }

    /// <summary>
    /// As HTML, each heading <paramref name="headingOffset"/> levels deeper (a part of the page under its own heading), its charts
    /// drawn by <paramref name="charts"/>.
    /// </summary>
    public string Html(int headingOffset = 0, IReportCharts? charts = null)
    {
        var html = new StringBuilder();
        foreach (var block in _blocks.Where(b => b.Formats.HasFlag(ReportFormats.Html)))
            html.Append(block switch
            {
                Chart { Data: ReportBarChart bars } => Drawn(charts).Bars(bars),
                Chart { Data: ReportLineChart lines } => Drawn(charts).Lines(lines),
                Heading h => $"<h{h.Level + headingOffset}>{Encode(h.Text)}</h{h.Level + headingOffset}>",
                Paragraph p => $"<p class=\"note\">{Encode(p.Text.ReplaceLineEndings(" "))}</p>",
                Bullets b => "<ul>" + string.Concat(b.Items.Select(i => $"<li>{Encode(i)}</li>")) + "</ul>",
                Table t => t.Html(),
                _ => throw new InvalidOperationException(block.GetType().Name),
            });
        return html.ToString();
    }

    private static IReportCharts Drawn(IReportCharts? charts) =>
        charts ?? throw new InvalidOperationException("A document with charts is rendered as HTML with the exporter's charts.");

    /// <summary>Prose as HTML: Markdown's emphasis and code marks dropped, the markup characters escaped.</summary>
    private static string Encode(string text) => WebUtility.HtmlEncode(text.Replace("**", "").Replace("`", ""));
}
