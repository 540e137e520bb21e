using System.Buffers;
using System.Globalization;
using System.Runtime.CompilerServices;
using System.Text;
using System.Xml;

namespace IntegrationTasks.Wire;

/// <summary>
/// The series' XML messages, made lossless. A request is <c>&lt;request&gt;&lt;id&gt;1&lt;/id&gt;…&lt;/request&gt;</c>;
/// a response is <c>&lt;table&gt;&lt;record&gt;</c> with the six fields in the series' order. Unlike the series:
/// invariant culture, shortest round-trip doubles ("R"), timestamps with all seven fractional digits,
/// NULL written as <c>nil="true"</c> (distinct from an empty string), and line breaks entitised so
/// that "\r\n" survives parsing. A row's payload follows as <c>&lt;Payload&gt;</c> (base64) or <c>&lt;PayloadText&gt;</c>
/// (escaped text); a row without one has neither, as in the series.
/// </summary>
public static class RecordXml
{
    public const string RequestElement = "request";
    public const string IdElement = "id";
    public const string TableElement = "table";

    /// <summary>What a server sends instead of a table when it refuses the client (too many connections): &lt;error code="IT3008"&gt;why&lt;/error&gt;.</summary>
    public const string ErrorElement = "error";
    public const string CodeAttribute = "code";

    /// <summary>Throws the coded error a refusal carries; a response that is no refusal is left for its importer to read.</summary>
    public static void ThrowIfRefusal(ReadOnlyMemory<byte> response)
    {
        if (XmlProlog.Inspect(new ReadOnlySequence<byte>(response), out var root) == PrologVerdict.Root
            && root.StartsWith("<" + ErrorElement, StringComparison.Ordinal) && root.Length > ErrorElement.Length + 1
            && root[ErrorElement.Length + 1] is ' ' or '>' or '/')
            ReadResponse(new MemoryStream(response.ToArray(), writable: false));
    }

    /// <summary>A refusal message, read by <see cref="ResponseReader"/> as the coded error it carries.</summary>
    public static byte[] Refusal(string code, string message)
    {
        using var buffer = new MemoryStream();
        using (var writer = XmlWriter.Create(buffer, WriterSettings))
        {
            writer.WriteStartElement(ErrorElement);
            writer.WriteAttributeString(CodeAttribute, code);
            writer.WriteString(message);
            writer.WriteEndElement();
        }
        return buffer.ToArray();
    }
    public const string RecordElement = "record";
    private const string NilAttribute = "nil";
    private const string DateFormat = "yyyy-MM-dd'T'HH:mm:ss.fffffff";

    private static readonly string[] FieldNames =
        ["ServiceTableID", "DescServiceTable", "Value", "CreationDate", "StringField1", "StringField2", "Payload", "PayloadText"];

    private static readonly XmlWriterSettings WriterSettings = new()
    {
        Encoding = new UTF8Encoding(encoderShouldEmitUTF8Identifier: false),
        NewLineHandling = NewLineHandling.Entitize,
        CheckCharacters = true,
        CloseOutput = false,
    };

    private static readonly XmlReaderSettings AsyncReaderSettings = new()
    {
        Async = true,
        DtdProcessing = DtdProcessing.Prohibit,
        XmlResolver = null,
        IgnoreComments = true,
        IgnoreProcessingInstructions = true,
        // Whitespace is data here (a field may be "  "); no indentation is ever written.
        IgnoreWhitespace = false,
        CloseInput = false,
    };

    // For messages already in memory: the same reader, synchronous (no Task per field).
    private static readonly XmlReaderSettings InMemoryReaderSettings = CopyWithAsync(AsyncReaderSettings, async: false);

    private static XmlReaderSettings CopyWithAsync(XmlReaderSettings settings, bool async)
    {
        var copy = settings.Clone();
        copy.Async = async;
        return copy;
    }


    // ---- requests ----

    /// <summary>What XmlWriter began every document with (its encoding name in lower case).</summary>
    private static ReadOnlySpan<byte> Declaration => "<?xml version=\"1.0\" encoding=\"utf-8\"?>"u8;

    public static void WriteRequest(Stream output, IEnumerable<int> ids)
    {
        using var writer = new Utf8XmlWriter(output);
        writer.Raw(Declaration);
        writer.Raw("<request"u8);
        var any = false;
        foreach (var id in ids)
        {
            // XmlWriter closed the start tag at the first child, and wrote a request of none as <request />.
            writer.Raw(any ? "<id>"u8 : "><id>"u8);
            any = true;
            writer.Format(id);
            writer.Raw("</id>"u8);
        }
        writer.Raw(any ? "</request>"u8 : " />"u8);
        writer.Flush();
    }

    /// <summary>Writes a request of any size to an asynchronous stream (an HTTP body) in bounded memory.</summary>
    public static async Task WriteRequestAsync(Stream output, IEnumerable<int> ids, CancellationToken cancellationToken)
    {
        using var chunks = new ChunkedOutput(output);
        using (var writer = XmlWriter.Create(chunks.Buffer, WriterSettings))
        {
            writer.WriteStartDocument();
            writer.WriteStartElement(RequestElement);
            var count = 0;
            foreach (var id in ids)
            {
                writer.WriteElementString(IdElement, id.ToString(CultureInfo.InvariantCulture));
                if (++count % 1024 != 0)
                    continue;
                writer.Flush();
                await chunks.SendAsync(force: false, cancellationToken).ConfigureAwait(false);
            }
            writer.WriteEndElement();
            writer.WriteEndDocument();
        }
        await chunks.SendAsync(force: true, cancellationToken).ConfigureAwait(false);
    }

    /// <summary>Reads a request's IDs (asynchronously: an HTTP request body may not be read synchronously).</summary>
    public static Task<List<int>> ReadRequestAsync(Stream input, CancellationToken cancellationToken = default) =>
        ReadRequestAsync(input, int.MaxValue, cancellationToken);

    /// <summary>
    /// Reads a request's IDs, refusing (IT2005) one that asks for more than <paramref name="maxIds"/> while it is read: its size in bytes
    /// bounds it only loosely (`&lt;id&gt;1&lt;/id&gt;` is ten bytes, its record a few hundred), and the reply is what would exhaust the server.
    /// </summary>
    public static async Task<List<int>> ReadRequestAsync(Stream input, int maxIds, CancellationToken cancellationToken = default)
    {
        var ids = new List<int>();
        var watched = new CountingStream(input); // not disposed: the caller owns the input
        try
        {
            using var xml = XmlReader.Create(watched, AsyncReaderSettings);
            var reader = new FieldReader(xml, async: true);
            await reader.ContentAsync().ConfigureAwait(false);
            ExpectElement(xml, RequestElement);
            var empty = xml.IsEmptyElement;
            await reader.NextAsync().ConfigureAwait(false);
            if (!empty)
            {
                while (await reader.SkipWhitespaceAsync().ConfigureAwait(false) == XmlNodeType.Element)
                {
                    cancellationToken.ThrowIfCancellationRequested();
                    ExpectElement(xml, IdElement);
                    if (ids.Count == maxIds)
                        throw new IntegrationException(ErrorCodes.BatchTooLarge,
                            $"The request asks for more than {maxIds:N0} records, the most one answer serves (MaxBatchRecords); refused before any lookup.");
                    ids.Add(ParseInt(await reader.ElementTextAsync().ConfigureAwait(false), IdElement));
                }
                if (xml.NodeType != XmlNodeType.EndElement)
                    throw Malformed(xml, $"unexpected {Describe(xml)} inside <{RequestElement}>");
                await reader.NextAsync().ConfigureAwait(false);
            }
            await reader.EnsureNothingAfterAsync(RequestElement).ConfigureAwait(false);
        }
        catch (XmlException e)
        {
            throw XmlError(e, RequestElement, truncated: watched.ReachedEnd);
        }
        return ids;
    }

    // ---- responses ----

    /// <summary>Writes records as they are produced; the caller disposes it to close the document.</summary>
    public sealed class ResponseWriter : IDisposable
    {
        private readonly Utf8XmlWriter _writer;
        private bool _failed;
        private bool _any;

        public ResponseWriter(Stream output)
        {
            _writer = new Utf8XmlWriter(output);
            _writer.Raw(Declaration);
            _writer.Raw("<table"u8);
        }

        public void Write(ServiceRecord record)
        {
            try
            {
                // XmlWriter closed the start tag at the first record, and wrote a table of none as <table />.
                _writer.Raw(_any ? "<record><ServiceTableID>"u8 : "><record><ServiceTableID>"u8);
                _any = true;
                _writer.Format(record.Id);
                _writer.Raw("</ServiceTableID>"u8);
                TextElement("<DescServiceTable>"u8, "</DescServiceTable>"u8, "<DescServiceTable />"u8, record.Desc);
                _writer.Raw("<Value>"u8);
                _writer.Format(record.Value, "R");
                _writer.Raw("</Value><CreationDate>"u8);
                _writer.Format(record.CreationDate, DateFormat);
                _writer.Raw("</CreationDate>"u8);
                WriteNullable("<StringField1>"u8, "</StringField1>"u8, "<StringField1 nil=\"true\" />"u8, record.StringField1);
                WriteNullable("<StringField2>"u8, "</StringField2>"u8, "<StringField2 nil=\"true\" />"u8, record.StringField2);
                if (record.Payload is { } payload)
                {
                    if (payload.Length == 0)
                        _writer.Raw("<Payload />"u8);
                    else
                    {
                        _writer.Raw("<Payload>"u8);
                        _writer.Base64(payload);
                        _writer.Raw("</Payload>"u8);
                    }
                }
                if (record.PayloadText is { } text)
                    TextElement("<PayloadText>"u8, "</PayloadText>"u8, "<PayloadText />"u8, text);
                _writer.Raw("</record>"u8);
            }
            catch (ArgumentException e)
            {
                // A character XML 1.0 cannot carry (a control character, a lone surrogate): the document is left unfinished.
                _failed = true;
                throw new IntegrationException(ErrorCodes.UnencodableValue,
                    $"Record {record.Id} holds a value XML cannot carry: {e.Message}", e);
            }
        }

        public void Flush() => _writer.Flush();

        // XmlWriter's WriteElementString wrote an element whose text was "" as <X />.
        private void TextElement(ReadOnlySpan<byte> start, ReadOnlySpan<byte> end, ReadOnlySpan<byte> empty, string text)
        {
            if (text.Length == 0)
            {
                _writer.Raw(empty);
                return;
            }
            _writer.Raw(start);
            _writer.Text(text);
            _writer.Raw(end);
        }

        // A nullable field is written with WriteString even when empty, which XmlWriter ended as <X></X>, not <X />.
        private void WriteNullable(ReadOnlySpan<byte> start, ReadOnlySpan<byte> end, ReadOnlySpan<byte> nil, string? value)
        {
            if (value is null)
            {
                _writer.Raw(nil);
                return;
            }
            _writer.Raw(start);
            _writer.Text(value);
            _writer.Raw(end);
        }

        public void Dispose()
        {
            if (!_failed)
                _writer.Raw(_any ? "</table>"u8 : " />"u8);
            _writer.Dispose();
        }
    }

    public static void WriteResponse(Stream output, IEnumerable<ServiceRecord> records)
    {
        using var writer = new ResponseWriter(output);
        foreach (var record in records)
            writer.Write(record);
    }

    /// <summary>
    /// Reads a whole response already in memory (a frame, a message body), synchronously: the asynchronous reader
    /// allocates a Task for every field, which is most of what parsing a record allocated.
    /// </summary>
    public static List<ServiceRecord> ReadResponse(Stream inMemory, CancellationToken cancellationToken = default)
    {
        cancellationToken.ThrowIfCancellationRequested();
        // The form this suite writes is read from its bytes; any other (or a broken one) by XmlReader, which judges and words it.
        if (inMemory is MemoryStream memory && memory.TryGetBuffer(out var buffer)
            && CanonicalResponseXml.TryRead(buffer.AsSpan((int)memory.Position), out var canonical))
            return canonical;
        var records = new List<ServiceRecord>();
        using var reader = new ResponseReader(inMemory, inMemory: true);
        while (true)
        {
            var next = reader.ReadAsync(cancellationToken);
            // A synchronous reader completes every call at once.
            if (next.GetAwaiter().GetResult() is not { } record)
                break;
            records.Add(record);
        }
        return records;
    }

    /// <summary>
    /// Reads a response one record at a time, asynchronously, so that a response still arriving
    /// (a file being read, an HTTP body being streamed) is imported as it comes, in bounded memory.
    /// </summary>
    public sealed class ResponseReader : IDisposable
    {
        private readonly XmlReader _xml;
        private readonly FieldReader _reader;
        private readonly CountingStream _input;
        private bool _started;
        private bool _finished;

        /// <param name="inMemory">The whole response is in <paramref name="input"/> already: read it synchronously.</param>
        public ResponseReader(Stream input, bool inMemory = false)
        {
            _input = new CountingStream(input); // not disposed: the caller owns the input
            _xml = XmlReader.Create(_input, inMemory ? InMemoryReaderSettings : AsyncReaderSettings);
            _reader = new FieldReader(_xml, async: !inMemory);
        }

        /// <summary>A server's refusal in place of a table: its coded reason, as the client's error.</summary>
        private async ValueTask<IntegrationException> RefusalAsync()
        {
            var code = _xml.GetAttribute(CodeAttribute);
            var text = await _reader.ElementTextAsync().ConfigureAwait(false);
            return new IntegrationException(code is { Length: 6 } && code.StartsWith("IT", StringComparison.Ordinal) ? code : ErrorCodes.RequestRefused,
                $"The server refused: {text}");
        }

        /// <summary>The next record, or null after the end of the table (checked: nothing may follow it).</summary>
        [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder<>))]
        public async ValueTask<ServiceRecord?> ReadAsync(CancellationToken cancellationToken = default)
        {
            cancellationToken.ThrowIfCancellationRequested();
            try
            {
                if (_finished)
                    return null;
                if (!_started)
                {
                    _started = true;
                    await _reader.ContentAsync().ConfigureAwait(false);
                    if (_xml.NodeType == XmlNodeType.Element && _xml.LocalName == ErrorElement)
                        throw await RefusalAsync().ConfigureAwait(false);
                    ExpectElement(_xml, TableElement);
                    var empty = _xml.IsEmptyElement;
                    await _reader.NextAsync().ConfigureAwait(false);
                    if (empty)
                        return await FinishAsync().ConfigureAwait(false);
                }
                await _reader.SkipWhitespaceAsync().ConfigureAwait(false);
                if (_xml.NodeType == XmlNodeType.EndElement && _xml.LocalName == TableElement)
                {
                    await _reader.NextAsync().ConfigureAwait(false);
                    return await FinishAsync().ConfigureAwait(false);
                }
                ExpectElement(_xml, RecordElement);
                if (_xml.IsEmptyElement)
                    throw Malformed(_xml, "an empty <record>");
                await _reader.NextAsync().ConfigureAwait(false);
                var id = ParseInt(await ReadRequiredAsync(FieldNames[0]).ConfigureAwait(false), FieldNames[0]);
                var desc = await ReadRequiredAsync(FieldNames[1]).ConfigureAwait(false);
                var value = ParseDouble(await ReadRequiredAsync(FieldNames[2]).ConfigureAwait(false), id);
                var date = ParseDate(await ReadRequiredAsync(FieldNames[3]).ConfigureAwait(false), id);
                var s1 = await ReadNullableAsync(FieldNames[4]).ConfigureAwait(false);
                var s2 = await ReadNullableAsync(FieldNames[5]).ConfigureAwait(false);
                byte[]? payload = null;
                string? text = null;
                if (await _reader.SkipWhitespaceAsync().ConfigureAwait(false) == XmlNodeType.Element && _xml.LocalName == FieldNames[6])
                    payload = await _reader.ElementBase64Async().ConfigureAwait(false);
                else if (_xml.NodeType == XmlNodeType.Element && _xml.LocalName == FieldNames[7])
                    text = await _reader.ElementTextAsync().ConfigureAwait(false);
                await _reader.SkipWhitespaceAsync().ConfigureAwait(false);
                if (_xml.NodeType != XmlNodeType.EndElement)
                    throw Malformed(_xml, $"record {id} has an unexpected {Describe(_xml)} after {(payload is not null ? FieldNames[6] : text is not null ? FieldNames[7] : FieldNames[5])}");
                await _reader.NextAsync().ConfigureAwait(false);
                return new ServiceRecord(id, desc, value, date, s1, s2, payload, text);
            }
            catch (XmlException e)
            {
                throw XmlError(e, TableElement, truncated: _input.ReachedEnd);
            }
        }

        private async ValueTask<ServiceRecord?> FinishAsync()
        {
            _finished = true;
            await _reader.EnsureNothingAfterAsync(TableElement).ConfigureAwait(false);
            return null;
        }

        [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder<>))]
        private async ValueTask<string> ReadRequiredAsync(string name)
        {
            await _reader.SkipWhitespaceAsync().ConfigureAwait(false);
            ExpectElement(_xml, name);
            if (_xml.GetAttribute(NilAttribute) is not null)
                throw Malformed(_xml, $"<{name}> cannot be nil");
            return await _reader.ElementTextAsync().ConfigureAwait(false);
        }

        [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder<>))]
        private async ValueTask<string?> ReadNullableAsync(string name)
        {
            await _reader.SkipWhitespaceAsync().ConfigureAwait(false);
            ExpectElement(_xml, name);
            var nil = _xml.GetAttribute(NilAttribute);
            if (nil is null)
                return await _reader.ElementTextAsync().ConfigureAwait(false);
            if (nil != "true")
                throw Malformed(_xml, $"<{name}> has nil=\"{nil}\"; only nil=\"true\" is allowed");
            if (!_xml.IsEmptyElement)
                throw Malformed(_xml, $"<{name} nil=\"true\"> must be empty");
            await _reader.NextAsync().ConfigureAwait(false);
            return null;
        }

        public void Dispose() => _xml.Dispose();
    }

    /// <summary>
    /// One parser for both modes, moving only with Read/ReadAsync (whose Task&lt;bool&gt; is cached) and taking text with
    /// GetValueAsync: XmlReader's MoveToContentAsync and ReadElementContentAsStringAsync allocated several Tasks and
    /// helpers per field, most of what parsing a streamed record allocated. In memory every call completes synchronously.
    /// The parse methods pool their state machines (each ValueTask is awaited once, at once), so a wait for the network
    /// does not allocate one per level.
    /// </summary>
    private sealed class FieldReader(XmlReader reader, bool async)
    {
        public ValueTask<bool> NextAsync() => async ? new(reader.ReadAsync()) : new(reader.Read());

        // At the start of a document: past the declaration, whitespace, comments and processing instructions.
        public ValueTask<XmlNodeType> ContentAsync() => async ? new(reader.MoveToContentAsync()) : new(reader.MoveToContent());

        // A text value may still be partly unread (the reader finishes it lazily): only GetValueAsync may read on for it.
        private ValueTask<string> ValueAsync() => async ? new(reader.GetValueAsync()) : new(reader.Value);

        /// <summary>Past whitespace between elements (comments and processing instructions are ignored by the settings).</summary>
        [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder<>))]
        public async ValueTask<XmlNodeType> SkipWhitespaceAsync()
        {
            while (reader.NodeType is XmlNodeType.Whitespace or XmlNodeType.SignificantWhitespace
                   || (reader.NodeType == XmlNodeType.Text && await IsWhitespaceTextAsync().ConfigureAwait(false)))
            {
                if (!await NextAsync().ConfigureAwait(false))
                    break;
            }
            return reader.NodeType;
        }

        /// <summary>
        /// XmlReader reports a whitespace run longer than its buffer (a few thousand characters, or less across a line break)
        /// as Text: read in chunks, never whole (it may be megabytes), it is still only whitespace between elements.
        /// </summary>
        private async ValueTask<bool> IsWhitespaceTextAsync()
        {
            var chunk = ArrayPool<char>.Shared.Rent(4096);
            try
            {
                int read;
                while ((read = async ? await reader.ReadValueChunkAsync(chunk, 0, chunk.Length).ConfigureAwait(false)
                           : reader.ReadValueChunk(chunk, 0, chunk.Length)) > 0)
                {
                    if (chunk.AsSpan(0, read).ContainsAnyExcept(" \t\r\n"))
                        return false;
                }
                return true;
            }
            finally
            {
                ArrayPool<char>.Shared.Return(chunk);
            }
        }

        /// <summary>Anything but whitespace after the root element is an error.</summary>
        public async ValueTask EnsureNothingAfterAsync(string root)
        {
            while (await NextAsync().ConfigureAwait(false))
            {
                if (reader.NodeType is not (XmlNodeType.Whitespace or XmlNodeType.SignificantWhitespace))
                    throw Malformed(reader, $"unexpected content after </{root}>");
            }
        }

        /// <summary>
        /// An element's base64 content: its text taken from the reader in large chunks (whitespace, CDATA and text nodes around a
        /// comment joined, as XML's base64Binary allows) and decoded at once by the vectorised decoder — XmlReader's own base64
        /// reader went a character at a time, most of what reading a large payload cost. The text is held once, in pooled
        /// memory, never as a string. The reader is left past its end tag; text that is not base64 is a malformed message.
        /// </summary>
        public async ValueTask<byte[]> ElementBase64Async()
        {
            var empty = reader.IsEmptyElement;
            await NextAsync().ConfigureAwait(false);
            if (empty)
                return [];
            var text = ArrayPool<char>.Shared.Rent(64 * 1024);
            var length = 0;
            try
            {
                while (reader.NodeType is XmlNodeType.Text or XmlNodeType.CDATA or XmlNodeType.Whitespace or XmlNodeType.SignificantWhitespace)
                {
                    while (true)
                    {
                        if (length == text.Length)
                        {
                            var larger = ArrayPool<char>.Shared.Rent(text.Length * 2);
                            text.AsSpan(0, length).CopyTo(larger);
                            ArrayPool<char>.Shared.Return(text);
                            text = larger;
                        }
                        var read = async ? await reader.ReadValueChunkAsync(text, length, text.Length - length).ConfigureAwait(false)
                            : reader.ReadValueChunk(text, length, text.Length - length);
                        if (read == 0)
                            break;
                        length += read;
                    }
                    await NextAsync().ConfigureAwait(false);
                }
                if (reader.NodeType != XmlNodeType.EndElement)
                    throw Malformed(reader, $"<{FieldNames[6]}> holds {Describe(reader)}; only base64 text is allowed");
                var bytes = Decode(text.AsSpan(0, length)) ?? throw Malformed(reader, $"<{FieldNames[6]}> is not base64");
                await NextAsync().ConfigureAwait(false);
                return bytes;
            }
            finally
            {
                ArrayPool<char>.Shared.Return(text);
            }
        }

        /// <summary>
        /// Base64 text decoded into an array of exactly its bytes (made once: a payload may be a megabyte), or null when it is not base64.
        /// The size comes from the text's length and padding; text with whitespace among its characters is decoded into a larger
        /// array first.
        /// </summary>
        private static byte[]? Decode(ReadOnlySpan<char> text)
        {
            var trimmed = text.TrimEnd(" \t\r\n");
            var exact = trimmed.Length / 4 * 3 - (trimmed.EndsWith("==") ? 2 : trimmed.EndsWith('=') ? 1 : 0);
            var bytes = new byte[Math.Max(exact, 0)];
            if (trimmed.Length % 4 == 0 && Convert.TryFromBase64Chars(text, bytes, out var decoded) && decoded == bytes.Length)
                return bytes;
            bytes = new byte[text.Length / 4 * 3];
            return Convert.TryFromBase64Chars(text, bytes, out decoded) ? bytes.AsSpan(0, decoded).ToArray() : null;
        }

        /// <summary>
        /// What ReadElementContentAsString returns, on an element: its text, whitespace and CDATA joined, "" when empty,
        /// and the reader left past its end tag; a child element is an error.
        /// </summary>
        [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder<>))]
        public async ValueTask<string> ElementTextAsync()
        {
            var name = reader.LocalName;
            var empty = reader.IsEmptyElement;
            await NextAsync().ConfigureAwait(false);
            if (empty)
                return "";
            string? text = null;
            while (reader.NodeType is XmlNodeType.Text or XmlNodeType.CDATA or XmlNodeType.Whitespace or XmlNodeType.SignificantWhitespace)
            {
                var part = await ValueAsync().ConfigureAwait(false);
                text = text is null ? part : string.Concat(text, part);
                await NextAsync().ConfigureAwait(false);
            }
            if (reader.NodeType != XmlNodeType.EndElement)
                throw Malformed(reader, $"<{name}> holds {Describe(reader)}; only text is allowed");
            await NextAsync().ConfigureAwait(false);
            return text ?? "";
        }
    }

    // ---- parsing helpers ----

    /// <summary>A parser error; <paramref name="truncated"/> when the input had ended (told by the stream, not by the error's text).</summary>
    private static IntegrationException XmlError(XmlException e, string root, bool truncated)
    {
        return new IntegrationException(ErrorCodes.MalformedXml,
            $"{(truncated ? "Truncated" : "Malformed")} XML <{root}> message at line {e.LineNumber}, position {e.LinePosition}: {e.Message}", e);
    }

    private static void ExpectElement(XmlReader reader, string name)
    {
        if (reader.NodeType != XmlNodeType.Element || reader.LocalName != name)
            throw Malformed(reader, $"expected <{name}> but found {Describe(reader)}");
    }

    private static int ParseInt(string text, string field) =>
        int.TryParse(text, NumberStyles.AllowLeadingSign, CultureInfo.InvariantCulture, out var value)
            ? value
            : throw new IntegrationException(ErrorCodes.InvalidFieldValue, $"<{field}> '{Clip(text)}' is not an integer.");

    private static double ParseDouble(string text, int id) =>
        double.TryParse(text, NumberStyles.Float, CultureInfo.InvariantCulture, out var value)
            ? value
            : throw new IntegrationException(ErrorCodes.InvalidFieldValue, $"Record {id}: <Value> '{Clip(text)}' is not a number.");

    private static DateTime ParseDate(string text, int id) =>
        DateTime.TryParseExact(text, DateFormat, CultureInfo.InvariantCulture, DateTimeStyles.None, out var value)
            ? value
            : throw new IntegrationException(ErrorCodes.InvalidFieldValue,
                $"Record {id}: <CreationDate> '{Clip(text)}' is not a timestamp of the form {DateFormat}.");

    private static IntegrationException Malformed(XmlReader reader, string detail)
    {
        var position = reader as IXmlLineInfo;
        var where = position?.HasLineInfo() == true ? $" at line {position.LineNumber}, position {position.LinePosition}" : "";
        return new IntegrationException(ErrorCodes.MalformedXml, $"Malformed XML message{where}: {detail}.");
    }

    private static string Describe(XmlReader reader) => reader.NodeType switch
    {
        XmlNodeType.Element => $"<{reader.Name}>",
        XmlNodeType.EndElement => $"</{reader.Name}>",
        XmlNodeType.None => "the end of the message",
        _ => reader.NodeType.ToString(),
    };

    private static string Clip(string text) => text.Length <= 40 ? text : text[..40] + "…";
}
