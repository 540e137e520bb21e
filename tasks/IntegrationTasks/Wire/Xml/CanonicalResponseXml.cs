using System.Buffers;
using System.Buffers.Text;
using System.Globalization;
using System.Text;
using System.Text.Unicode;

namespace IntegrationTasks.Wire;

/// <summary>
/// Reads a response in memory straight from its UTF-8 bytes when it is in the form <see cref="Utf8XmlWriter"/> writes — the
/// declaration or none, the fields in the series' order, no whitespace between elements, text escaped with the five named
/// entities and &amp;#xD;/&amp;#xA;/&amp;#x9;, base64 without line breaks. XmlReader took most of a small record's parse in its own
/// machinery and read text a character at a time. Anything else — a comment, CDATA, another entity, a raw CR, a control
/// character, bytes that are not UTF-8, a value that does not parse, a refusal — returns false, and the caller reads the message
/// with XmlReader, which accepts every well-formed form and words every error as before. Nothing is decided differently here:
/// this path only takes what it can read exactly as XmlReader would.
/// </summary>
internal static class CanonicalResponseXml
{
    private const string DateFormat = "yyyy-MM-dd'T'HH:mm:ss.fffffff";

    internal static ReadOnlySpan<byte> Declaration => "<?xml version=\"1.0\" encoding=\"utf-8\"?>"u8;

    /// <summary>Bytes that text may hold only through XmlReader: an entity or reference, a raw CR (normalised there), forbidden controls.</summary>
    private static readonly SearchValues<byte> TextSpecial = SearchValues.Create(
        [(byte)'&', (byte)'\r', 0, 1, 2, 3, 4, 5, 6, 7, 8, 11, 12, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31]);

    public static bool TryRead(ReadOnlySpan<byte> message, out List<ServiceRecord> records)
    {
        records = [];
        if (message.StartsWith(Declaration))
            message = message[Declaration.Length..];
        if (message.SequenceEqual(EmptyTable))
            return true;
        if (!Skip(ref message, "<table>"u8))
            return false;
        while (!message.SequenceEqual("</table>"u8))
        {
            if (!TryRecord(ref message, out var record))
                return false;
            records.Add(record);
        }
        return true;
    }

    /// <summary>One whole record, <paramref name="s"/> moved past its end tag.</summary>
    internal static bool TryRecord(ref ReadOnlySpan<byte> s, out ServiceRecord record)
    {
        record = null!;
        if (!TryHead(ref s, out var head))
            return false;
        byte[]? payload = null;
        string? payloadText = null;
        if (s.StartsWith("<Payload"u8) && !s.StartsWith("<PayloadText"u8))
        {
            if (Skip(ref s, "<Payload />"u8))
                payload = [];
            else if (!Skip(ref s, PayloadStart) || !Until(ref s, PayloadEnd, out var base64) || !TryBase64(base64, out payload))
                return false;
        }
        else if (s.StartsWith("<PayloadText"u8) && !TryText(ref s, "<PayloadText>"u8, "</PayloadText>"u8, "<PayloadText />"u8, out payloadText))
            return false;
        if (!Skip(ref s, RecordEnd))
            return false;
        record = head.ToRecord(payload, payloadText);
        return true;
    }

    /// <summary>A response of no records, as the writer writes it.</summary>
    internal static ReadOnlySpan<byte> EmptyTable => "<table />"u8;

    internal static ReadOnlySpan<byte> PayloadStart => "<Payload>"u8;
    internal static ReadOnlySpan<byte> PayloadEnd => "</Payload>"u8;
    internal static ReadOnlySpan<byte> RecordEnd => "</record>"u8;

    /// <summary>A record's six fields, from its start tag to where a payload would begin; <paramref name="s"/> moved past them.</summary>
    internal static bool TryHead(ref ReadOnlySpan<byte> s, out RecordHead head)
    {
        head = default;
        if (!Skip(ref s, "<record><ServiceTableID>"u8)
            || !Until(ref s, "</ServiceTableID>"u8, out var idText)
            || !Printable(idText) || !int.TryParse(idText, NumberStyles.AllowLeadingSign, CultureInfo.InvariantCulture, out var id)
            || !TryText(ref s, "<DescServiceTable>"u8, "</DescServiceTable>"u8, "<DescServiceTable />"u8, out var desc)
            || !Skip(ref s, "<Value>"u8) || !Until(ref s, "</Value>"u8, out var valueText)
            || !Printable(valueText) || !double.TryParse(valueText, NumberStyles.Float, CultureInfo.InvariantCulture, out var value)
            || !Skip(ref s, "<CreationDate>"u8) || !Until(ref s, "</CreationDate>"u8, out var dateText)
            || !Printable(dateText) || !TryDate(dateText, out var date)
            || !TryNullable(ref s, "<StringField1>"u8, "</StringField1>"u8, "<StringField1 nil=\"true\" />"u8, out var field1)
            || !TryNullable(ref s, "<StringField2>"u8, "</StringField2>"u8, "<StringField2 nil=\"true\" />"u8, out var field2))
            return false;
        head = new RecordHead(id, desc, value, date, field1, field2);
        return true;
    }

    /// <summary>The series' six fields of a record read so far.</summary>
    internal readonly record struct RecordHead(int Id, string Desc, double Value, DateTime Date, string? Field1, string? Field2)
    {
        public ServiceRecord ToRecord(byte[]? payload, string? payloadText) => new(Id, Desc, Value, Date, Field1, Field2, payload, payloadText);
    }

    /// <summary>
    /// A number's or a date's text in printable ASCII only: .NET's parsing takes trailing NULs and vertical tabs as nothing, which
    /// XmlReader refuses as characters XML forbids.
    /// </summary>
    private static bool Printable(ReadOnlySpan<byte> text) => !text.ContainsAnyExceptInRange((byte)0x20, (byte)0x7E);

    private static bool Skip(ref ReadOnlySpan<byte> s, ReadOnlySpan<byte> markup)
    {
        if (!s.StartsWith(markup))
            return false;
        s = s[markup.Length..];
        return true;
    }

    /// <summary>The bytes up to the next '&lt;', which must begin <paramref name="end"/>; <paramref name="s"/> moves past it.</summary>
    private static bool Until(ref ReadOnlySpan<byte> s, ReadOnlySpan<byte> end, out ReadOnlySpan<byte> content)
    {
        var at = s.IndexOf((byte)'<');
        content = at < 0 ? default : s[..at];
        if (at < 0 || !s[at..].StartsWith(end))
            return false;
        s = s[(at + end.Length)..];
        return true;
    }

    private static bool TryText(ref ReadOnlySpan<byte> s, ReadOnlySpan<byte> start, ReadOnlySpan<byte> end, ReadOnlySpan<byte> empty, out string text)
    {
        text = "";
        if (Skip(ref s, empty))
            return true;
        return Skip(ref s, start) && Until(ref s, end, out var content) && TryDecode(content, out text);
    }

    private static bool TryNullable(ref ReadOnlySpan<byte> s, ReadOnlySpan<byte> start, ReadOnlySpan<byte> end, ReadOnlySpan<byte> nil, out string? text)
    {
        text = null;
        if (Skip(ref s, nil))
            return true;
        // A nullable field's "" was written <X></X> (XmlWriter's WriteString), never <X />.
        if (!Skip(ref s, start) || !Until(ref s, end, out var content) || !TryDecode(content, out var value))
            return false;
        text = value;
        return true;
    }

    /// <summary>Element text as XmlReader would give it, or false where only XmlReader may judge it.</summary>
    private static bool TryDecode(ReadOnlySpan<byte> content, out string text)
    {
        text = "";
        // "]]>" may not stand in text, U+FFFE/U+FFFF are not XML characters: XmlReader's to refuse.
        if (!Utf8.IsValid(content) || content.IndexOf("]]>"u8) >= 0 || content.IndexOf("\uFFFE"u8) >= 0 || content.IndexOf("\uFFFF"u8) >= 0)
            return false;
        var special = content.IndexOfAny(TextSpecial);
        if (special < 0)
        {
            text = Encoding.UTF8.GetString(content);
            return true;
        }
        var chars = ArrayPool<char>.Shared.Rent(content.Length);
        try
        {
            var length = 0;
            while (content.Length > 0)
            {
                special = content.IndexOfAny(TextSpecial);
                var run = special < 0 ? content : content[..special];
                length += Encoding.UTF8.GetChars(run, chars.AsSpan(length));
                content = content[run.Length..];
                if (content.Length == 0)
                    break;
                if (content[0] != '&')
                    return false;
                var end = content.IndexOf((byte)';');
                char? character = end < 0 ? null : Entity(content[1..end]);
                if (character is null)
                    return false;
                chars[length++] = character.Value;
                content = content[(end + 1)..];
            }
            text = new string(chars, 0, length);
            return true;
        }
        finally
        {
            ArrayPool<char>.Shared.Return(chars);
        }
    }

    private static char? Entity(ReadOnlySpan<byte> name) => name switch
    {
        _ when name.SequenceEqual("lt"u8) => '<',
        _ when name.SequenceEqual("gt"u8) => '>',
        _ when name.SequenceEqual("amp"u8) => '&',
        _ when name.SequenceEqual("quot"u8) => '"',
        _ when name.SequenceEqual("apos"u8) => '\'',
        _ when name.SequenceEqual("#xD"u8) => '\r',
        _ when name.SequenceEqual("#xA"u8) => '\n',
        _ when name.SequenceEqual("#x9"u8) => '\t',
        _ => null,
    };

    private static bool TryDate(ReadOnlySpan<byte> text, out DateTime date)
    {
        date = default;
        Span<char> chars = stackalloc char[32];
        if (text.Length > chars.Length || Ascii.ToUtf16(text, chars, out var length) != OperationStatus.Done)
            return false;
        return DateTime.TryParseExact(chars[..length], DateFormat, CultureInfo.InvariantCulture, DateTimeStyles.None, out date);
    }

    /// <summary>Base64 with nothing but its characters (no line breaks) into an array of exactly its bytes.</summary>
    private static bool TryBase64(ReadOnlySpan<byte> text, out byte[]? bytes)
    {
        bytes = null;
        if (text.Length % 4 != 0)
            return false;
        var size = text.Length / 4 * 3 - (text.EndsWith("=="u8) ? 2 : text.EndsWith("="u8) ? 1 : 0);
        // Every byte is written on success; on failure the array is dropped.
        var decoded = GC.AllocateUninitializedArray<byte>(size);
        if (Base64.DecodeFromUtf8(text, decoded, out var consumed, out var written) != OperationStatus.Done || consumed != text.Length || written != size)
            return false;
        bytes = decoded;
        return true;
    }
}
