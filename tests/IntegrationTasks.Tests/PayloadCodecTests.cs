using System.Runtime.Serialization;
using System.Xml;
using Google.Protobuf;
using IntegrationTasks.Grpc.Contract;

namespace IntegrationTasks.Tests;

/// <summary>Each encoding the transports use carries a row's payload, bytes or text, exactly; a row without one is as before.</summary>
[TestClass]
[TestCategory("Unit")]
public sealed class PayloadCodecTests
{
    private static readonly PayloadShape[] Shapes =
        [PayloadShape.None, new(1, PayloadKind.Bytes), new(3000, PayloadKind.Bytes), new(1, PayloadKind.Text), new(3000, PayloadKind.Text)];

    private static IEnumerable<ServiceRecord> Rows() =>
        Shapes.SelectMany(shape => Enumerable.Range(1, 20).Select(id => SamplePayload.Row(id, shape)))
            .Append(SampleData.Create(21) with { Payload = [] })
            .Append(SampleData.Create(22) with { PayloadText = "" });

    [TestMethod]
    public void The_series_XML_carries_bytes_as_base64_and_text_escaped()
    {
        var rows = Rows().ToList();
        using var body = new MemoryStream();
        RecordXml.WriteResponse(body, rows);
        var xml = Encoding.UTF8.GetString(body.ToArray());
        StringAssert.Contains(xml, $"<Payload>{Convert.ToBase64String(rows[20].Payload!)}</Payload>");
        StringAssert.Contains(xml, "&lt;b class=\"x\"&gt;&amp;amp;&lt;/b&gt;");
        Assert.IsFalse(xml[..xml.IndexOf("</record>", StringComparison.Ordinal)].Contains("Payload"), "a row without a payload is the series' row");
        body.Position = 0;
        RowChecks.AssertSameRows(rows, RecordXml.ReadResponse(body), "XML");
    }

    [TestMethod]
    public void A_payload_that_is_not_base64_is_a_coded_malformed_message()
    {
        var xml = "<table><record><ServiceTableID>1</ServiceTableID><DescServiceTable>d</DescServiceTable><Value>1</Value>" +
                  "<CreationDate>2014-05-10T13:45:00.0000000</CreationDate><StringField1/><StringField2/><Payload>not*base64</Payload></record></table>";
        var e = Assert.ThrowsExactly<IntegrationException>(() => RecordXml.ReadResponse(new MemoryStream(Encoding.UTF8.GetBytes(xml))));
        Assert.AreEqual(ErrorCodes.MalformedXml, e.Code);
    }

    [TestMethod]
    [DataRow("AAECAwQF/w==", DisplayName = "one text node")]
    [DataRow(" AAEC\r\n AwQF\t/w== ", DisplayName = "whitespace among the characters")]
    [DataRow("AAEC<!-- a note -->AwQF<![CDATA[/w==]]>", DisplayName = "text around a comment and a CDATA section")]
    public void A_base64_payload_reads_the_same_however_its_text_is_split(string payload)
    {
        var xml = "<table><record><ServiceTableID>1</ServiceTableID><DescServiceTable>d</DescServiceTable><Value>1</Value>" +
                  $"<CreationDate>2014-05-10T13:45:00.0000000</CreationDate><StringField1/><StringField2/><Payload>{payload}</Payload></record></table>";
        var row = RecordXml.ReadResponse(new MemoryStream(Encoding.UTF8.GetBytes(xml))).Single();
        CollectionAssert.AreEqual(new byte[] { 0, 1, 2, 3, 4, 5, 255 }, row.Payload);
    }

    [TestMethod]
    public async Task JSON_carries_bytes_as_base64_and_leaves_out_a_missing_payload()
    {
        var rows = Rows().ToList();
        var body = new MemoryStream(RestProtocolTests.Body(rows));
        using (var document = JsonDocument.Parse(body.ToArray()))
        {
            var first = document.RootElement[0];
            Assert.IsFalse(first.TryGetProperty("payload", out _) || first.TryGetProperty("payloadText", out _) || first.TryGetProperty("payloadLength", out _));
            Assert.AreEqual(Convert.ToBase64String(rows[20].Payload!), document.RootElement[20].GetProperty("payload").GetString());
        }
        body.Position = 0;
        var back = new List<ServiceRecord>();
        await foreach (var row in RestProtocol.ReadRecordsAsync(body, CancellationToken.None))
            back.Add(row);
        RowChecks.AssertSameRows(rows, back, "JSON");
    }

    [TestMethod]
    public void Protobuf_carries_bytes_and_text_in_a_oneof()
    {
        var rows = Rows().ToList();
        var reply = BatchReply.Parser.ParseFrom(RecordMessages.ToReply(1, rows).ToByteArray());
        RowChecks.AssertSameRows(rows, [.. reply.Records.Select(RecordMessages.ToRecord)], "protobuf");
        Assert.AreEqual(Record.PayloadOneofCase.None, rows[0].ToMessage().PayloadCase);
    }

    [TestMethod]
    [DataRow(false, DisplayName = "text encoding (SOAP)")]
    [DataRow(true, DisplayName = "binary encoding (net.tcp)")]
    public void The_data_contract_carries_both_in_either_encoding(bool binary)
    {
        var rows = Rows().ToList();
        var serializer = new DataContractSerializer(typeof(List<RecordData>));
        using var body = new MemoryStream();
        using (var writer = binary ? XmlDictionaryWriter.CreateBinaryWriter(body, null, null, ownsStream: false)
                   : XmlDictionaryWriter.CreateTextWriter(body, Encoding.UTF8, ownsStream: false))
            serializer.WriteObject(writer, rows.Select(RecordDataMapping.ToData).ToList());
        body.Position = 0;
        using var reader = binary
            ? XmlDictionaryReader.CreateBinaryReader(body, XmlDictionaryReaderQuotas.Max)
            : XmlDictionaryReader.CreateTextReader(body, XmlDictionaryReaderQuotas.Max);
        var back = (List<RecordData>)serializer.ReadObject(reader)!;
        RowChecks.AssertSameRows(rows, [.. back.Select(RecordDataMapping.ToRecord)], binary ? "binary data contract" : "text data contract");
    }
}
