using System.Globalization;
using System.Text;
using System.Xml;
using IntegrationTasks.Common;
using IntegrationTasks.Data;

namespace IntegrationTasks.Wire;

/// <summary>
/// The series' XML messages, made lossless. A request is <c>&lt;request&gt;&lt;id&gt;1&lt;/id&gt;…&lt;/request&gt;</c>;
/// a response is <c>&lt;table&gt;&lt;record&gt;</c> with the six fields in the series' order. Unlike the series:
/// invariant culture, shortest round-trip doubles ("R"), timestamps with all seven fractional digits,
/// NULL written as <c>nil="true"</c> (distinct from an empty string), and line breaks entitised so
/// that "\r\n" survives parsing.
/// </summary>
public static class RecordXml
{
    public const string RequestElement = "request";
    public const string IdElement = "id";
    public const string TableElement = "table";
    public const string RecordElement = "record";
    private const string NilAttribute = "nil";
    private const string DateFormat = "yyyy-MM-dd'T'HH:mm:ss.fffffff";

    private static readonly string[] FieldNames =
        ["ServiceTableID", "DescServiceTable", "Value", "CreationDate", "StringField1", "StringField2"];

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

    public static void WriteRequest(Stream output, IEnumerable<int> ids)
    {
        using var writer = XmlWriter.Create(output, WriterSettings);
        writer.WriteStartDocument();
        writer.WriteStartElement(RequestElement);
        foreach (var id in ids)
            writer.WriteElementString(IdElement, id.ToString(CultureInfo.InvariantCulture));
        writer.WriteEndElement();
        writer.WriteEndDocument();
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
    public static async Task<List<int>> ReadRequestAsync(Stream input, CancellationToken cancellationToken = default)
    {
        var ids = new List<int>();
        try
        {
            using var reader = XmlReader.Create(input, AsyncReaderSettings);
            await reader.MoveToContentAsync().ConfigureAwait(false);
            ExpectElement(reader, RequestElement);
            var empty = reader.IsEmptyElement;
            await reader.ReadAsync().ConfigureAwait(false);
            if (!empty)
            {
                while (await reader.MoveToContentAsync().ConfigureAwait(false) == XmlNodeType.Element)
                {
                    cancellationToken.ThrowIfCancellationRequested();
                    ExpectElement(reader, IdElement);
                    ids.Add(ParseInt(await reader.ReadElementContentAsStringAsync().ConfigureAwait(false), IdElement));
                }
                if (reader.NodeType != XmlNodeType.EndElement)
                    throw Malformed(reader, $"unexpected {Describe(reader)} inside <{RequestElement}>");
                await reader.ReadAsync().ConfigureAwait(false);
            }
            await EnsureNothingAfterAsync(reader, RequestElement).ConfigureAwait(false);
        }
        catch (XmlException e)
        {
            throw XmlError(e, RequestElement);
        }
        return ids;
    }

    /// <summary>Anything but whitespace after the root element is an error.</summary>
    private static async Task EnsureNothingAfterAsync(XmlReader reader, string root)
    {
        while (await reader.ReadAsync().ConfigureAwait(false))
        {
            if (reader.NodeType is not (XmlNodeType.Whitespace or XmlNodeType.SignificantWhitespace))
                throw Malformed(reader, $"unexpected content after </{root}>");
        }
    }

    // ---- responses ----

    /// <summary>Writes records as they are produced; the caller disposes it to close the document.</summary>
    public sealed class ResponseWriter : IDisposable
    {
        private readonly XmlWriter _writer;

        public ResponseWriter(Stream output)
        {
            _writer = XmlWriter.Create(output, WriterSettings);
            _writer.WriteStartDocument();
            _writer.WriteStartElement(TableElement);
        }

        public void Write(ServiceRecord record)
        {
            try
            {
                _writer.WriteStartElement(RecordElement);
                _writer.WriteElementString(FieldNames[0], record.Id.ToString(CultureInfo.InvariantCulture));
                _writer.WriteElementString(FieldNames[1], record.Desc);
                _writer.WriteElementString(FieldNames[2], record.Value.ToString("R", CultureInfo.InvariantCulture));
                _writer.WriteElementString(FieldNames[3], record.CreationDate.ToString(DateFormat, CultureInfo.InvariantCulture));
                WriteNullable(FieldNames[4], record.StringField1);
                WriteNullable(FieldNames[5], record.StringField2);
                _writer.WriteEndElement();
            }
            catch (ArgumentException e)
            {
                // A character XML 1.0 cannot carry (a control character, a lone surrogate).
                throw new IntegrationException(ErrorCodes.UnencodableValue,
                    $"Record {record.Id} holds a value XML cannot carry: {e.Message}", e);
            }
        }

        public void Flush() => _writer.Flush();

        private void WriteNullable(string name, string? value)
        {
            _writer.WriteStartElement(name);
            if (value is null)
                _writer.WriteAttributeString(NilAttribute, "true");
            else
                _writer.WriteString(value);
            _writer.WriteEndElement();
        }

        public void Dispose()
        {
            // After a failed record the writer is in error state: close it without completing the document.
            if (_writer.WriteState is not (WriteState.Error or WriteState.Closed))
            {
                _writer.WriteEndElement();
                _writer.WriteEndDocument();
            }
            try
            {
                _writer.Dispose();
            }
            catch (InvalidOperationException)
            {
            }
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
        private readonly XmlReader _reader;
        private readonly bool _async;
        private bool _started;
        private bool _finished;

        /// <param name="inMemory">The whole response is in <paramref name="input"/> already: read it synchronously.</param>
        public ResponseReader(Stream input, bool inMemory = false)
        {
            _async = !inMemory;
            _reader = XmlReader.Create(input, inMemory ? InMemoryReaderSettings : AsyncReaderSettings);
        }

        // One parser for both modes: in memory these complete synchronously and allocate nothing.
        private ValueTask<bool> NextAsync() => _async ? new(_reader.ReadAsync()) : new(_reader.Read());
        private ValueTask<XmlNodeType> ContentAsync() => _async ? new(_reader.MoveToContentAsync()) : new(_reader.MoveToContent());
        private ValueTask<string> ElementTextAsync() => _async ? new(_reader.ReadElementContentAsStringAsync()) : new(_reader.ReadElementContentAsString());

        /// <summary>The next record, or null after the end of the table (checked: nothing may follow it).</summary>
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
                    await ContentAsync().ConfigureAwait(false);
                    ExpectElement(_reader, TableElement);
                    var empty = _reader.IsEmptyElement;
                    await NextAsync().ConfigureAwait(false);
                    if (empty)
                        return await FinishAsync().ConfigureAwait(false);
                }
                await ContentAsync().ConfigureAwait(false);
                if (_reader.NodeType == XmlNodeType.EndElement && _reader.LocalName == TableElement)
                {
                    await NextAsync().ConfigureAwait(false);
                    return await FinishAsync().ConfigureAwait(false);
                }
                ExpectElement(_reader, RecordElement);
                if (_reader.IsEmptyElement)
                    throw Malformed(_reader, "an empty <record>");
                await NextAsync().ConfigureAwait(false);
                var id = ParseInt(await ReadRequiredAsync(FieldNames[0]).ConfigureAwait(false), FieldNames[0]);
                var desc = await ReadRequiredAsync(FieldNames[1]).ConfigureAwait(false);
                var value = ParseDouble(await ReadRequiredAsync(FieldNames[2]).ConfigureAwait(false), id);
                var date = ParseDate(await ReadRequiredAsync(FieldNames[3]).ConfigureAwait(false), id);
                var s1 = await ReadNullableAsync(FieldNames[4]).ConfigureAwait(false);
                var s2 = await ReadNullableAsync(FieldNames[5]).ConfigureAwait(false);
                await ContentAsync().ConfigureAwait(false);
                if (_reader.NodeType != XmlNodeType.EndElement)
                    throw Malformed(_reader, $"record {id} has an unexpected {Describe(_reader)} after StringField2");
                await NextAsync().ConfigureAwait(false);
                return new ServiceRecord(id, desc, value, date, s1, s2);
            }
            catch (XmlException e)
            {
                throw XmlError(e, TableElement);
            }
        }

        private async ValueTask<ServiceRecord?> FinishAsync()
        {
            _finished = true;
            while (await NextAsync().ConfigureAwait(false))
            {
                if (_reader.NodeType is not (XmlNodeType.Whitespace or XmlNodeType.SignificantWhitespace))
                    throw Malformed(_reader, $"unexpected content after </{TableElement}>");
            }
            return null;
        }

        private async ValueTask<string> ReadRequiredAsync(string name)
        {
            await ContentAsync().ConfigureAwait(false);
            ExpectElement(_reader, name);
            if (_reader.GetAttribute(NilAttribute) is not null)
                throw Malformed(_reader, $"<{name}> cannot be nil");
            return await ElementTextAsync().ConfigureAwait(false);
        }

        private async ValueTask<string?> ReadNullableAsync(string name)
        {
            await ContentAsync().ConfigureAwait(false);
            ExpectElement(_reader, name);
            var nil = _reader.GetAttribute(NilAttribute);
            if (nil is null)
                return await ElementTextAsync().ConfigureAwait(false);
            if (nil != "true")
                throw Malformed(_reader, $"<{name}> has nil=\"{nil}\"; only nil=\"true\" is allowed");
            if (!_reader.IsEmptyElement)
                throw Malformed(_reader, $"<{name} nil=\"true\"> must be empty");
            await NextAsync().ConfigureAwait(false);
            return null;
        }

        public void Dispose() => _reader.Dispose();
    }

    // ---- parsing helpers ----

    private static IntegrationException XmlError(XmlException e, string root)
    {
        var truncated = e.Message.Contains("Unexpected end of file", StringComparison.OrdinalIgnoreCase);
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
