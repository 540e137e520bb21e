using System.Runtime.Serialization;
using System.Xml;
using Google.Protobuf;
using IntegrationTasks.Grpc.Contract;

namespace IntegrationTasks.Tests;

/// <summary>
/// The bytes each codec puts on the wire for one fixed batch, kept in Golden/: a faster codec must write exactly these and read
/// them back to the same rows. After a deliberate change of a wire format:
///   UPDATE_GOLDEN=1 dotnet test tests/IntegrationTasks.Tests --filter FullyQualifiedName~GoldenWireTests
/// and read the diff before committing it.
/// </summary>
[TestClass]
[TestCategory("Unit")]
public sealed class GoldenWireTests
{
    /// <summary>The batches: the series' rows, then the same with a payload of bytes, then of text (markup, quotes, line breaks, 1–4-byte characters).</summary>
    public static IEnumerable<object[]> Shapes => [["none"], ["bytes"], ["text"]];

    private static PayloadShape ShapeNamed(string name) => name switch
    {
        "bytes" => new PayloadShape(300, PayloadKind.Bytes),
        "text" => new PayloadShape(300, PayloadKind.Text),
        _ => PayloadShape.None,
    };

    /// <summary>Twelve rows (markup and non-ASCII descriptions among them), the largest double and the smallest subnormal, and with a payload an empty one.</summary>
    private static List<ServiceRecord> Batch(string shape)
    {
        var payload = ShapeNamed(shape);
        var rows = Enumerable.Range(1, 12).Append(998).Append(999).Select(id => SamplePayload.Row(id, payload)).ToList();
        if (payload.Kind == PayloadKind.Bytes && payload.Bytes > 0)
            rows.Add(SampleData.Create(1000) with { Payload = [] });
        else if (payload.Kind == PayloadKind.Text)
            rows.Add(SampleData.Create(1000) with { PayloadText = "" });
        return rows;
    }

    private static void AssertGolden(string file, byte[] actual)
    {
        var path = Path.Combine(RepositoryPaths.Root, "tests", "IntegrationTasks.Tests", "Golden", file);
        if (Environment.GetEnvironmentVariable("UPDATE_GOLDEN") == "1")
        {
            Directory.CreateDirectory(Path.GetDirectoryName(path)!);
            File.WriteAllBytes(path, actual);
        }
        Assert.IsTrue(File.Exists(path), $"No golden file at {path}: make it with UPDATE_GOLDEN=1.");
        var expected = File.ReadAllBytes(path);
        var differsAt = expected.AsSpan().CommonPrefixLength(actual);
        Assert.IsTrue(differsAt == expected.Length && differsAt == actual.Length,
            $"{file}: {actual.Length:N0} bytes against the golden {expected.Length:N0}, first different at byte {differsAt:N0}.");
    }

    [TestMethod]
    public void The_series_XML_request_is_the_golden_bytes_and_reads_back()
    {
        using var body = new MemoryStream();
        int[] ids = [1, 2, 3, 998, 999, int.MaxValue];
        RecordXml.WriteRequest(body, ids);
        AssertGolden("xml-request.xml", body.ToArray());
        body.Position = 0;
        CollectionAssert.AreEqual(ids, RecordXml.ReadRequestAsync(body).GetAwaiter().GetResult());
    }

    [TestMethod]
    [DynamicData(nameof(Shapes))]
    public void The_series_XML_response_is_the_golden_bytes_and_reads_back(string shape)
    {
        var rows = Batch(shape);
        using var body = new MemoryStream();
        RecordXml.WriteResponse(body, rows);
        AssertGolden($"xml-response-{shape}.xml", body.ToArray());
        body.Position = 0;
        RowChecks.AssertSameRows(rows, RecordXml.ReadResponse(body), "XML");
    }

    /// <summary>What the series' messages were written with before the UTF-8 writer: XmlWriter, with RecordXml's settings and calls.</summary>
    private static byte[] AsXmlWriterWrote(Action<XmlWriter> write)
    {
        using var body = new MemoryStream();
        using (var writer = XmlWriter.Create(body, new XmlWriterSettings
               {
                   Encoding = new UTF8Encoding(encoderShouldEmitUTF8Identifier: false), NewLineHandling = NewLineHandling.Entitize, CheckCharacters = true,
               }))
            write(writer);
        return body.ToArray();
    }

    private static void XmlWriterResponse(XmlWriter writer, IEnumerable<ServiceRecord> rows)
    {
        writer.WriteStartDocument();
        writer.WriteStartElement("table");
        foreach (var r in rows)
        {
            writer.WriteStartElement("record");
            writer.WriteElementString("ServiceTableID", r.Id.ToString(System.Globalization.CultureInfo.InvariantCulture));
            writer.WriteElementString("DescServiceTable", r.Desc);
            writer.WriteElementString("Value", r.Value.ToString("R", System.Globalization.CultureInfo.InvariantCulture));
            writer.WriteElementString("CreationDate", r.CreationDate.ToString("yyyy-MM-dd'T'HH:mm:ss.fffffff", System.Globalization.CultureInfo.InvariantCulture));
            foreach (var (name, value) in new[] { ("StringField1", r.StringField1), ("StringField2", r.StringField2) })
            {
                writer.WriteStartElement(name);
                if (value is null)
                    writer.WriteAttributeString("nil", "true");
                else
                    writer.WriteString(value);
                writer.WriteEndElement();
            }
            if (r.Payload is { } payload)
            {
                writer.WriteStartElement("Payload");
                writer.WriteBase64(payload, 0, payload.Length);
                writer.WriteEndElement();
            }
            if (r.PayloadText is { } text)
                writer.WriteElementString("PayloadText", text);
            writer.WriteEndElement();
        }
        writer.WriteEndElement();
        writer.WriteEndDocument();
    }

    [TestMethod]
    public void The_UTF8_writer_writes_what_XmlWriter_wrote_for_empty_messages_and_every_escape()
    {
        // The golden files hold three batches; these are the forms they do not: no record, no ID, a description of nothing but escapes.
        var escapes = SampleData.Create(3) with { Desc = "<>&\"'\r\n\t\r\n ]]> ✓ 😀", StringField1 = "", StringField2 = "\r" };
        foreach (var rows in new[] { new List<ServiceRecord>(), [escapes], [escapes, SampleData.Create(4) with { Desc = "" }] })
        {
            using var body = new MemoryStream();
            RecordXml.WriteResponse(body, rows);
            CollectionAssert.AreEqual(AsXmlWriterWrote(w => XmlWriterResponse(w, rows)), body.ToArray(), $"{rows.Count} rows");
        }
        foreach (var ids in new[] { Array.Empty<int>(), [1], [int.MinValue, 0, int.MaxValue] })
        {
            using var body = new MemoryStream();
            RecordXml.WriteRequest(body, ids);
            CollectionAssert.AreEqual(AsXmlWriterWrote(w =>
            {
                w.WriteStartDocument();
                w.WriteStartElement("request");
                foreach (var id in ids)
                    w.WriteElementString("id", id.ToString(System.Globalization.CultureInfo.InvariantCulture));
                w.WriteEndElement();
                w.WriteEndDocument();
            }), body.ToArray(), $"{ids.Length} IDs");
        }
    }

    [TestMethod]
    public void A_tagged_TCP_frame_is_its_header_and_the_golden_XML()
    {
        var rows = Batch("none");
        using var buffer = new PooledBufferStream();
        FrameCodec.BeginFrame(buffer, FrameFormat.Tagged);
        RecordXml.WriteResponse(buffer, rows);
        AssertGolden("tcp-frame-tagged-none.bin", FrameCodec.EndFrame(buffer, FrameFormat.Tagged, batchId: 7).ToArray());
    }

    [TestMethod]
    [DynamicData(nameof(Shapes))]
    public async Task The_REST_JSON_body_is_the_golden_bytes_and_reads_back(string shape)
    {
        var rows = Batch(shape);
        var body = RestProtocolTests.Body(rows);
        AssertGolden($"json-response-{shape}.json", body);
        var back = new List<ServiceRecord>();
        await foreach (var row in RestProtocol.ReadRecordsAsync(new MemoryStream(body), CancellationToken.None))
            back.Add(row);
        RowChecks.AssertSameRows(rows, back, "JSON");
    }

    [TestMethod]
    [DynamicData(nameof(Shapes))]
    public void The_protobuf_reply_is_the_golden_bytes_and_reads_back(string shape)
    {
        var rows = Batch(shape);
        var bytes = RecordMessages.ToReply(1, rows).ToByteArray();
        AssertGolden($"protobuf-reply-{shape}.bin", bytes);
        RowChecks.AssertSameRows(rows, [.. BatchReply.Parser.ParseFrom(bytes).Records.Select(RecordMessages.ToRecord)], "protobuf");
    }

    [TestMethod]
    [DynamicData(nameof(Shapes))]
    public void The_data_contract_is_the_golden_bytes_in_either_encoding_and_reads_back(string shape)
    {
        var rows = Batch(shape);
        var serializer = new DataContractSerializer(typeof(List<RecordData>));
        foreach (var binary in new[] { false, true })
        {
            using var body = new MemoryStream();
            using (var writer = binary ? XmlDictionaryWriter.CreateBinaryWriter(body, null, null, ownsStream: false)
                       : XmlDictionaryWriter.CreateTextWriter(body, Encoding.UTF8, ownsStream: false))
                serializer.WriteObject(writer, rows.Select(RecordDataMapping.ToData).ToList());
            AssertGolden(binary ? $"datacontract-binary-{shape}.bin" : $"datacontract-text-{shape}.xml", body.ToArray());
            body.Position = 0;
            using var reader = binary
                ? XmlDictionaryReader.CreateBinaryReader(body, XmlDictionaryReaderQuotas.Max)
                : XmlDictionaryReader.CreateTextReader(body, XmlDictionaryReaderQuotas.Max);
            RowChecks.AssertSameRows(rows, [.. ((List<RecordData>)serializer.ReadObject(reader)!).Select(RecordDataMapping.ToRecord)], binary ? "binary data contract" : "text data contract");
        }
    }
}
