using System.Net;
using System.Text;

namespace IntegrationTasks.Results;

/// <summary>
/// A part of the report as blocks — headings, paragraphs, bullet lists and tables — that each format renders: results.md and
/// report.html's figures are made from the same blocks, so the HTML never reads the Markdown. A table holds its columns and rows,
/// rendered only when an exporter asks (<see cref="Markdown"/>, <see cref="Html"/>): the model holds no Markdown or HTML.
/// </summary>
public sealed class ReportDocument
{
    private abstract record Block;
    private sealed record Heading(int Level, string Text) : Block;
    private sealed record Paragraph(string Text) : Block;
    private sealed record Bullets(IReadOnlyList<string> Items) : Block;
    private abstract record Table : Block
    {
        public abstract string Markdown();
        public abstract string Html();
    }

    private sealed record Table<TRow>(IReadOnlyList<ReportColumn<TRow>> Columns, IReadOnlyList<TRow> Rows) : Table
    {
        public override string Markdown() => ReportTable.Markdown(Columns, Rows);
        public override string Html() => "<div class=\"wide\">" + ReportTable.Html(Columns, Rows) + "</div>";
    }

    private readonly List<Block> _blocks = [];

    public bool IsEmpty => _blocks.Count == 0;

    public ReportDocument AddHeading(int level, string text) => Add(new Heading(level, text));

    /// <summary>Prose, without markup (a line break inside is a space on the page).</summary>
    public ReportDocument AddParagraph(string text) => text.Trim('\n') is { Length: > 0 } trimmed ? Add(new Paragraph(trimmed)) : this;

    public ReportDocument AddBullets(IEnumerable<string> items) => items.ToList() is { Count: > 0 } list ? Add(new Bullets(list)) : this;

    /// <summary>A table of <paramref name="columns"/> over <paramref name="rows"/>, as each format renders them (<see cref="ReportTable"/>).</summary>
    public ReportDocument AddTable<TRow>(IReadOnlyList<ReportColumn<TRow>> columns, IEnumerable<TRow> rows) =>
        Add(new Table<TRow>(columns, [.. rows]));

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
        foreach (var block in _blocks)
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

    /// <summary>As HTML, each heading <paramref name="headingOffset"/> levels deeper (a part of the page under its own heading).</summary>
    public string Html(int headingOffset = 0)
    {
        var html = new StringBuilder();
        foreach (var block in _blocks)
            html.Append(block switch
            {
                Heading h => $"<h{h.Level + headingOffset}>{Encode(h.Text)}</h{h.Level + headingOffset}>",
                Paragraph p => $"<p class=\"note\">{Encode(p.Text.ReplaceLineEndings(" "))}</p>",
                Bullets b => "<ul>" + string.Concat(b.Items.Select(i => $"<li>{Encode(i)}</li>")) + "</ul>",
                Table t => t.Html(),
                _ => throw new InvalidOperationException(block.GetType().Name),
            });
        return html.ToString();
    }

    /// <summary>Prose as HTML: Markdown's emphasis and code marks dropped, the markup characters escaped.</summary>
    private static string Encode(string text) => WebUtility.HtmlEncode(text.Replace("**", "").Replace("`", ""));
}
