using System.Buffers;
using System.Globalization;

namespace IntegrationTasks.Wire;

/// <summary>
/// Writes the series' XML messages straight as UTF-8 bytes, the same bytes XmlWriter wrote with <see cref="RecordXml"/>'s settings
/// (the golden wire tests hold them): text escaped as it did (&lt; &gt; &amp;, CR as &amp;#xD;, line feeds and tabs as they are),
/// base64 by the vectorised routines a block at a time, numbers and dates formatted into the buffer. XmlWriter went through
/// UTF-16 and a base64 encoder of its own, byte by byte; a megabyte payload cost it several times the encode itself.
/// A character XML 1.0 cannot carry is an <see cref="ArgumentException"/>, as XmlWriter's CheckCharacters made it.
/// </summary>
internal sealed class Utf8XmlWriter(Stream output) : IDisposable
{
    /// <summary>The buffer is written to the stream when it holds this much (XmlWriter's own buffer was smaller).</summary>
    private const int FlushAt = 64 * 1024;

    /// <summary>Text is escaped this many characters at a time, so that a megabyte of it never needs a buffer of its own size.</summary>
    private const int TextBlock = 16 * 1024;

    /// <summary>Bytes encoded to base64 a block at a time (a multiple of 3: only the last block pads).</summary>
    private const int Base64Block = 48 * 1024;

    /// <summary>
    /// What text must be escaped or refused: markup, CR, the control characters XML forbids and U+FFFE/U+FFFF. Line feeds and tabs
    /// pass as they are, and surrogates are checked by the transcoder (a lone one is not UTF-16).
    /// </summary>
    private static readonly SearchValues<char> Special = SearchValues.Create(
        "<>&\r\u0000\u0001\u0002\u0003\u0004\u0005\u0006\u0007\u0008\u000B\u000C\u000E\u000F\u0010\u0011\u0012\u0013\u0014\u0015\u0016\u0017"
        + "\u0018\u0019\u001A\u001B\u001C\u001D\u001E\u001F\uFFFE\uFFFF");

    private byte[] _buffer = ArrayPool<byte>.Shared.Rent(FlushAt + 1024);
    private int _length;

    /// <summary>Room for <paramref name="bytes"/> more, the buffer written out first when it is full.</summary>
    private Span<byte> Room(int bytes)
    {
        if (_length + bytes > _buffer.Length)
        {
            Drain();
            if (bytes > _buffer.Length)
            {
                ArrayPool<byte>.Shared.Return(_buffer);
                _buffer = ArrayPool<byte>.Shared.Rent(bytes);
            }
        }
        return _buffer.AsSpan(_length);
    }

    private void Drain()
    {
        if (_length == 0)
            return;
        output.Write(_buffer, 0, _length);
        _length = 0;
    }

    /// <summary>Markup the caller knows to be well formed (tags, the declaration, nil="true").</summary>
    public void Raw(ReadOnlySpan<byte> utf8)
    {
        utf8.CopyTo(Room(utf8.Length));
        _length += utf8.Length;
        if (_length >= FlushAt)
            Drain();
    }

    /// <summary>A number or a date, formatted invariantly straight into the buffer (none of the series' fields needs 64 bytes).</summary>
    public void Format<T>(T value, string? format = null) where T : IUtf8SpanFormattable
    {
        if (!value.TryFormat(Room(64), out var written, format, CultureInfo.InvariantCulture))
            throw new InvalidOperationException($"A {typeof(T).Name} did not format in 64 bytes.");
        _length += written;
    }

    /// <summary>Element text, escaped as XmlWriter escaped it with NewLineHandling.Entitize.</summary>
    public void Text(ReadOnlySpan<char> text)
    {
        while (text.Length > 0)
        {
            var plain = text.IndexOfAny(Special);
            var run = text[..(plain < 0 ? Math.Min(text.Length, TextBlock) : Math.Min(plain, TextBlock))];
            if (run.Length > 0)
            {
                // A pair split by the block's end goes whole into the next block.
                if (run.Length < text.Length && char.IsHighSurrogate(run[^1]))
                    run = run[..^1];
                if (run.Length > 0)
                {
                    if (System.Text.Unicode.Utf8.FromUtf16(run, Room(run.Length * 3), out var read, out var written, replaceInvalidSequences: false)
                        != OperationStatus.Done)
                        throw Invalid(run[read]);
                    _length += written;
                    text = text[run.Length..];
                    continue;
                }
            }
            switch (text[0])
            {
                case '<': Raw("&lt;"u8); break;
                case '>': Raw("&gt;"u8); break;
                case '&': Raw("&amp;"u8); break;
                case '\r': Raw("&#xD;"u8); break;
                default:
                    throw Invalid(text[0]);
            }
            text = text[1..];
        }
    }

    // The character itself stays out of the message: a NUL or a lone surrogate would travel on into logs and headers.
    private static ArgumentException Invalid(char c) =>
        new(string.Create(CultureInfo.InvariantCulture, $"the character U+{(int)c:X4} is not allowed in XML."));

    /// <summary>Bytes as base64 text, a block at a time.</summary>
    public void Base64(ReadOnlySpan<byte> bytes)
    {
        while (bytes.Length > 0)
        {
            var block = bytes[..Math.Min(bytes.Length, Base64Block)];
            System.Buffers.Text.Base64.EncodeToUtf8(block, Room(System.Buffers.Text.Base64.GetMaxEncodedToUtf8Length(block.Length)), out _, out var written);
            _length += written;
            bytes = bytes[block.Length..];
            if (_length >= FlushAt)
                Drain();
        }
    }

    /// <summary>What is buffered to the stream, and the stream flushed (as XmlWriter.Flush did).</summary>
    public void Flush()
    {
        Drain();
        output.Flush();
    }

    /// <summary>Writes what is buffered (a document ended or not, as XmlWriter left a failed one), flushes the stream as XmlWriter's close did, and returns the buffer.</summary>
    public void Dispose()
    {
        if (_buffer.Length == 0)
            return;
        try
        {
            Flush();
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(_buffer);
            _buffer = [];
        }
    }
}
