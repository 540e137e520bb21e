namespace IntegrationTasks.Tests;

/// <summary>
/// A Markdown table of a report read back as cells, so a test checks a figure by its row and column — rewording a heading
/// or adding a column breaks no test that is not about it.
/// </summary>
internal sealed partial class MarkdownTable
{
    private MarkdownTable(IReadOnlyList<string> headers, IReadOnlyList<IReadOnlyList<string>> rows) => (Headers, Rows) = (headers, rows);

    public IReadOnlyList<string> Headers { get; }

    public IReadOnlyList<IReadOnlyList<string>> Rows { get; }

    /// <summary>Every table in the text, in order (a run of lines starting with "|": header, separator, rows).</summary>
    /// <summary>The value of the report's bullet "- <paramref name="name"/>: value" (the first such line).</summary>
    public static string Bullet(string markdown, string name) =>
        markdown.Split('\n').Select(l => l.TrimEnd('\r')).FirstOrDefault(l => l.StartsWith($"- {name}: ", StringComparison.Ordinal))?[(name.Length + 4)..]
        ?? throw new AssertFailedException($"No bullet '- {name}: ' in:\n{markdown}");

    /// <summary>The first line that starts with <paramref name="start"/>: a heading, a bullet, a sentence.</summary>
    public static string Line(string text, string start) =>
        text.Split('\n').Select(l => l.TrimEnd('\r')).FirstOrDefault(l => l.StartsWith(start, StringComparison.Ordinal))
        ?? throw new AssertFailedException($"No line starting '{start}' in:\n{text}");

    public static List<MarkdownTable> All(string markdown)
    {
        var tables = new List<MarkdownTable>();
        var lines = markdown.Split('\n');
        for (var i = 0; i + 1 < lines.Length; i++)
        {
            if (!lines[i].StartsWith('|') || !lines[i + 1].StartsWith("|---", StringComparison.Ordinal) && !lines[i + 1].StartsWith("|:--", StringComparison.Ordinal))
                continue;
            var headers = Cells(lines[i]);
            var rows = new List<IReadOnlyList<string>>();
            for (i += 2; i < lines.Length && lines[i].StartsWith('|'); i++)
                rows.Add(Cells(lines[i]));
            tables.Add(new MarkdownTable(headers, rows));
        }
        return tables;
    }

    /// <summary>The one table in the text with this header; fails the test when there is none or more than one.</summary>
    public static MarkdownTable With(string markdown, string header)
    {
        var tables = All(markdown).Where(t => t.Headers.Contains(header)).ToList();
        Assert.HasCount(1, tables, $"tables with the header \"{header}\"");
        return tables[0];
    }

    /// <summary>The first table after the first line that starts with <paramref name="heading"/>.</summary>
    public static MarkdownTable After(string markdown, string heading)
    {
        var at = markdown.IndexOf("\n" + heading, StringComparison.Ordinal);
        Assert.IsGreaterThanOrEqualTo(0, at, $"no line starts with \"{heading}\"");
        var tables = All(markdown[at..]);
        Assert.AreNotEqual(0, tables.Count, $"no table after \"{heading}\"");
        return tables[0];
    }

    public bool HasRow(string first) => Rows.Any(r => r[0] == first);

    /// <summary>The row whose first cell is <paramref name="first"/>, by header.</summary>
    public IReadOnlyDictionary<string, string> Row(string first)
    {
        var rows = Rows.Where(r => r[0] == first).ToList();
        Assert.HasCount(1, rows, $"rows named \"{first}\" in the table of {string.Join(", ", Headers)}");
        return Headers.Zip(rows[0]).ToDictionary(p => p.First, p => p.Second);
    }

    /// <summary>The rows whose first cell is <paramref name="first"/> (a transport at several client counts), by header.</summary>
    public List<IReadOnlyDictionary<string, string>> RowsNamed(string first) =>
        [.. Rows.Where(r => r[0] == first).Select(r => (IReadOnlyDictionary<string, string>)Headers.Zip(r).ToDictionary(p => p.First, p => p.Second))];

    public string Cell(string first, string header) => Row(first)[header];

    private static List<string> Cells(string line)
    {
        var inner = line.Trim();
        inner = inner[1..(inner.EndsWith('|') && !inner.EndsWith("\\|", StringComparison.Ordinal) ? ^1 : ^0)];
        return [.. UnescapedBar().Split(inner).Select(c => c.Trim().Replace("\\|", "|"))];
    }

    [GeneratedRegex(@"(?<!\\)\|")]
    private static partial Regex UnescapedBar();
}
