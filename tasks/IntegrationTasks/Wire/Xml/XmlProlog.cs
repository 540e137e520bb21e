using System.Buffers;
using System.Text;

namespace IntegrationTasks.Wire;

/// <summary>What the start of an XML message shows before any parser runs.</summary>
public enum PrologVerdict
{
    /// <summary>Not decided yet: more bytes are needed.</summary>
    NeedMore,

    /// <summary>A document type declaration (or another &lt;! declaration) before the root: refused, never parsed.</summary>
    Doctype,

    /// <summary>The root element's start tag is here (see the root tag); no DTD came before it.</summary>
    Root,

    /// <summary>Not XML as far as the prolog goes: the parser will say what is wrong.</summary>
    NotXml,
}

/// <summary>
/// A scan of an XML message's prolog — byte order mark, whitespace, declaration, comments, processing instructions — up to the
/// root's start tag, so that a DTD is refused before any parser expands an entity (a "billion laughs" costs the scan, not the
/// expansion), and the root's namespace can be checked (SOAP 1.2 on a SOAP 1.1 endpoint).
/// </summary>
public static class XmlProlog
{
    public static PrologVerdict Inspect(ReadOnlySequence<byte> message, out string rootTag)
    {
        rootTag = "";
        var bytes = message.IsSingleSegment ? message.FirstSpan : message.ToArray();
        var at = bytes.StartsWith("\uFEFF"u8) ? 3 : 0;
        while (true)
        {
            while (at < bytes.Length && bytes[at] is (byte)' ' or (byte)'\t' or (byte)'\r' or (byte)'\n')
                at++;
            var rest = bytes[at..];
            if (rest.Length < 4)
                return rest.Length > 0 && rest[0] != (byte)'<' ? PrologVerdict.NotXml : PrologVerdict.NeedMore;
            if (rest[0] != (byte)'<')
                return PrologVerdict.NotXml;
            if (rest.StartsWith("<!--"u8) || rest.StartsWith("<?"u8))
            {
                var close = rest[1] == (byte)'?' ? "?>"u8 : "-->"u8;
                var end = rest[2..].IndexOf(close);
                if (end < 0)
                    return PrologVerdict.NeedMore;
                at += 2 + end + close.Length;
                continue;
            }
            if (rest[1] == (byte)'!')
                return PrologVerdict.Doctype;
            var tagEnd = rest.IndexOf((byte)'>');
            if (tagEnd < 0)
                return PrologVerdict.NeedMore;
            rootTag = Encoding.UTF8.GetString(rest[..(tagEnd + 1)]);
            return PrologVerdict.Root;
        }
    }
}
