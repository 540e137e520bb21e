namespace IntegrationTasks.Tests;

/// <summary>
/// C# as the architecture checks read it: comments dropped, the text of string and character literals left out, but the holes of an
/// interpolated string kept as code (<c>$"{RowKey.PayloadSize(n)}"</c> names <c>RowKey</c>). Regular, verbatim and raw literals,
/// interpolated or not, with any number of <c>$</c>.
/// </summary>
internal static class CodeText
{
    public static string Of(string source)
    {
        var code = new StringBuilder(source.Length);
        var at = 0;
        CopyCode(source, ref at, code, inHole: false);
        return code.ToString();
    }

    /// <summary>Copies code from <paramref name="at"/>; inside a hole, up to the brace that closes it (left unread).</summary>
    private static void CopyCode(string s, ref int at, StringBuilder code, bool inHole)
    {
        var braces = 0;
        while (at < s.Length)
        {
            var c = s[at];
            if (c == '#' && AtLineStart(s, at))
            {
                // A directive (#region, #error text…): its text is no code, and an apostrophe in it no character literal.
                while (at < s.Length && s[at] != '\n')
                    at++;
            }
            else if (c == '/' && At(s, at + 1) == '/')
            {
                while (at < s.Length && s[at] != '\n')
                    at++;
            }
            else if (c == '/' && At(s, at + 1) == '*')
            {
                var end = s.IndexOf("*/", at + 2, StringComparison.Ordinal);
                at = end < 0 ? s.Length : end + 2;
                code.Append(' ');
            }
            else if (c == '\'')
            {
                at += At(s, at + 1) == '\\' ? 3 : 2;
                while (at < s.Length && s[at] != '\'')
                    at++; // the rest of an escape such as '\u0041'
                at++;
                code.Append("' '");
            }
            else if (StringStart(s, at) is { } literal)
            {
                at += literal.Length;
                code.Append("\"\"");
                SkipString(s, ref at, code, literal);
                code.Append("\"\"");
            }
            else if (inHole && c == '}' && braces == 0)
            {
                return;
            }
            else
            {
                braces += c == '{' ? 1 : c == '}' ? -1 : 0;
                code.Append(c);
                at++;
            }
        }
    }

    private sealed record Literal(int Length, int Dollars, bool Verbatim, int Quotes);

    /// <summary>The literal that starts here (<c>"</c>, <c>@"</c>, <c>$"</c>, <c>$@"</c>, <c>"""</c>, <c>$$"""</c>, …), or null.</summary>
    private static Literal? StringStart(string s, int at)
    {
        var i = at;
        var dollars = 0;
        var verbatim = false;
        while (i < s.Length && (s[i] == '$' || s[i] == '@'))
        {
            dollars += s[i] == '$' ? 1 : 0;
            verbatim |= s[i] == '@';
            i++;
        }
        if (At(s, i) != '"' || (i > at && at > 0 && (char.IsLetterOrDigit(s[at - 1]) || s[at - 1] == '_')))
            return null;
        var quotes = 0;
        while (At(s, i + quotes) == '"')
            quotes++;
        // Two quotes and no third: the empty string; a verbatim literal is never raw (@"""" is one escaped quote).
        quotes = quotes >= 3 && !verbatim ? quotes : 1;
        return new Literal(i - at + quotes, dollars, verbatim, quotes);
    }

    private static void SkipString(string s, ref int at, StringBuilder code, Literal literal)
    {
        var raw = literal.Quotes >= 3;
        // A hole opens at one brace in $"…" and $@"…", at as many braces as there are dollars in a raw literal.
        var holeBraces = raw ? Math.Max(literal.Dollars, 1) : 1;
        while (at < s.Length)
        {
            var c = s[at];
            if (raw && c == '"' && Run(s, at, '"') >= literal.Quotes)
            {
                at += literal.Quotes;
                return;
            }
            if (!raw && c == '"')
            {
                if (literal.Verbatim && At(s, at + 1) == '"')
                {
                    at += 2;
                    continue;
                }
                at++;
                return;
            }
            if (!raw && !literal.Verbatim && c == '\\')
            {
                at += 2;
                continue;
            }
            if (literal.Dollars > 0 && c == '{')
            {
                var run = Run(s, at, '{');
                if (!raw && run >= 2)
                {
                    at += 2; // "{{": a brace of the text
                    continue;
                }
                if (run >= holeBraces)
                {
                    at += run;
                    code.Append(' ');
                    CopyCode(s, ref at, code, inHole: true);
                    code.Append(' ');
                    at += Math.Min(Run(s, at, '}'), holeBraces);
                    continue;
                }
            }
            at++;
        }
    }

    private static int Run(string s, int at, char c)
    {
        var n = 0;
        while (At(s, at + n) == c)
            n++;
        return n;
    }

    private static char At(string s, int i) => i < s.Length ? s[i] : '\0';

    private static bool AtLineStart(string s, int at)
    {
        var i = at - 1;
        while (i >= 0 && s[i] is ' ' or '\t')
            i--;
        return i < 0 || s[i] == '\n';
    }
}
