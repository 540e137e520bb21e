namespace IntegrationTasks.Tests;

[TestClass]
[TestCategory("Unit")]
public sealed class RecordXmlTests
{
    private static List<ServiceRecord> RoundTrip(IEnumerable<ServiceRecord> records)
    {
        using var buffer = new MemoryStream();
        RecordXml.WriteResponse(buffer, records);
        buffer.Position = 0;
        return RecordXml.ReadResponse(buffer);
    }

    [TestMethod]
    public void Sample_rows_round_trip_exactly_whatever_the_current_culture()
    {
        var rows = Enumerable.Range(1, 3000).Select(id => SampleData.Create(id)).ToList();
        var previous = CultureInfo.CurrentCulture;
        try
        {
            // pt-BR writes "1,5" and dd/MM dates: the series' culture, which broke its formats.
            CultureInfo.CurrentCulture = new CultureInfo("pt-BR");
            var back = RoundTrip(rows);
            Assert.HasCount(rows.Count, back);
            for (var i = 0; i < rows.Count; i++)
                Assert.IsTrue(rows[i].SameValuesAs(back[i]), $"row {rows[i].Id}: {rows[i]} became {back[i]}");
        }
        finally
        {
            CultureInfo.CurrentCulture = previous;
        }
    }

    [TestMethod]
    public void Edge_values_survive()
    {
        var date = new DateTime(2014, 5, 10, 23, 59, 59, DateTimeKind.Unspecified).AddTicks(1234567);
        ServiceRecord[] rows =
        [
            new(1, "", double.MaxValue, date, null, ""),
            new(2, "  spaces  ", double.Epsilon, date, "", null),
            new(3, "a\r\nb\rc\nd\te", -0.1, date, "<x>&amp;\"'</x>", "日本語 ✓ 😀"),
            new(4, "]]>", 1234567890.123456789, DateTime.MinValue, " ", "\n"),
            new(-5, "negative id", -1.7976931348623157E+308, DateTime.MaxValue, null, null),
        ];
        var back = RoundTrip(rows);
        for (var i = 0; i < rows.Length; i++)
            Assert.IsTrue(rows[i].SameValuesAs(back[i]), $"{rows[i]} became {back[i]}");
        Assert.IsNull(back[0].StringField1);
        Assert.AreEqual("", back[0].StringField2);
    }

    [TestMethod]
    public void A_request_round_trips()
    {
        using var buffer = new MemoryStream();
        RecordXml.WriteRequest(buffer, [1, 2, 1_000_000, int.MaxValue]);
        buffer.Position = 0;
        CollectionAssert.AreEqual(new[] { 1, 2, 1_000_000, int.MaxValue }, RecordXml.ReadRequestAsync(buffer).GetAwaiter().GetResult());
    }

    [TestMethod]
    public void An_empty_request_reads_as_no_ids()
    {
        Assert.IsEmpty(ReadRequest("<request/>"));
        Assert.IsEmpty(ReadRequest("<?xml version=\"1.0\"?><request></request>"));
    }

    [TestMethod]
    [DataRow("", DisplayName = "empty")]
    [DataRow("garbage", DisplayName = "not XML")]
    [DataRow("<request><id>1</id>", DisplayName = "truncated")]
    [DataRow("<request><id>1</id><id>2", DisplayName = "truncated inside an element")]
    [DataRow("<other/>", DisplayName = "wrong root")]
    [DataRow("<request><name>1</name></request>", DisplayName = "unknown element")]
    [DataRow("<request><id>1</id></request><request/>", DisplayName = "two roots")]
    [DataRow("<!DOCTYPE request [<!ENTITY x \"1\">]><request><id>&x;</id></request>", DisplayName = "DTD")]
    public void Malformed_requests_fail_with_IT2001(string xml)
    {
        var e = Assert.ThrowsExactly<IntegrationException>(() => ReadRequest(xml));
        Assert.AreEqual(ErrorCodes.MalformedXml, e.Code, e.Message);
    }

    [TestMethod]
    [DataRow("<request><id>x</id></request>", DisplayName = "not a number")]
    [DataRow("<request><id>1.5</id></request>", DisplayName = "fraction")]
    [DataRow("<request><id>99999999999</id></request>", DisplayName = "overflow")]
    public void Bad_ids_fail_with_IT2002(string xml)
    {
        var e = Assert.ThrowsExactly<IntegrationException>(() => ReadRequest(xml));
        Assert.AreEqual(ErrorCodes.InvalidFieldValue, e.Code, e.Message);
    }

    private const string Good =
        "<ServiceTableID>1</ServiceTableID><DescServiceTable>d</DescServiceTable><Value>1.5</Value>" +
        "<CreationDate>2014-05-10T13:45:00.1230000</CreationDate><StringField1>a</StringField1><StringField2 nil=\"true\"/>";

    [TestMethod]
    [DataRow("<table><record>" + Good, ErrorCodes.MalformedXml, DisplayName = "truncated")]
    [DataRow("<table><record>" + Good + "</record>", ErrorCodes.MalformedXml, DisplayName = "no end of table")]
    [DataRow("<table><record><ServiceTableID>1</ServiceTableID></record></table>", ErrorCodes.MalformedXml, DisplayName = "missing fields")]
    [DataRow("<table><record>" + Good + "<Extra/></record></table>", ErrorCodes.MalformedXml, DisplayName = "extra field")]
    [DataRow("<table><row>" + Good + "</row></table>", ErrorCodes.MalformedXml, DisplayName = "wrong element")]
    [DataRow("<table><record><DescServiceTable>d</DescServiceTable></record></table>", ErrorCodes.MalformedXml, DisplayName = "wrong order")]
    [DataRow("<table><record><ServiceTableID>1</ServiceTableID><DescServiceTable nil=\"true\"/><Value>1</Value><CreationDate>2014-05-10T13:45:00.0000000</CreationDate><StringField1/><StringField2/></record></table>",
        ErrorCodes.MalformedXml, DisplayName = "nil on a required field")]
    [DataRow("<table><record><ServiceTableID>1</ServiceTableID><DescServiceTable>d</DescServiceTable><Value>1</Value><CreationDate>2014-05-10T13:45:00.0000000</CreationDate><StringField1 nil=\"false\"/><StringField2/></record></table>",
        ErrorCodes.MalformedXml, DisplayName = "nil not true")]
    [DataRow("<table><record><ServiceTableID>1</ServiceTableID><DescServiceTable>d</DescServiceTable><Value>1,5</Value><CreationDate>2014-05-10T13:45:00.0000000</CreationDate><StringField1/><StringField2/></record></table>",
        ErrorCodes.InvalidFieldValue, DisplayName = "culture-formatted number")]
    [DataRow("<table><record><ServiceTableID>1</ServiceTableID><DescServiceTable>d</DescServiceTable><Value>1</Value><CreationDate>10/05/2014 01:45:00</CreationDate><StringField1/><StringField2/></record></table>",
        ErrorCodes.InvalidFieldValue, DisplayName = "the series' date format")]
    public async Task Malformed_responses_fail_with_a_code(string xml, string code)
    {
        // Both readers: in memory (synchronous) and streaming (asynchronous), one parser.
        var e = Assert.ThrowsExactly<IntegrationException>(() => RecordXml.ReadResponse(Utf8(xml)));
        Assert.AreEqual(code, e.Code, e.Message);
        using var streaming = new RecordXml.ResponseReader(Utf8(xml));
        e = await Assert.ThrowsExactlyAsync<IntegrationException>(async () =>
        {
            while (await streaming.ReadAsync() is not null)
            {
            }
        });
        Assert.AreEqual(code, e.Code, e.Message);
    }

    [TestMethod]
    public void A_good_response_parses()
    {
        var records = RecordXml.ReadResponse(Utf8("<table><record>" + Good + "</record></table>"));
        Assert.HasCount(1, records);
        Assert.AreEqual(new DateTime(2014, 5, 10, 13, 45, 0, 123), records[0].CreationDate);
        Assert.IsNull(records[0].StringField2);
    }

    [TestMethod]
    public async Task A_response_arriving_a_byte_at_a_time_parses_like_one_in_memory()
    {
        // Every text value is split across reads: the streamed reader must finish partial values asynchronously.
        var rows = Enumerable.Range(1, 50).Select(id => SampleData.Create(id)).ToList();
        rows.Add(new ServiceRecord(51, new string('x', 9000) + "\r\n&<>", -0.0, DateTime.MaxValue, "", null));
        using var buffer = new MemoryStream();
        RecordXml.WriteResponse(buffer, rows);
        var streamed = await ReadStreamedAsync(new TrickleStream(buffer.ToArray()));
        Assert.HasCount(rows.Count, streamed);
        for (var i = 0; i < rows.Count; i++)
            Assert.IsTrue(rows[i].SameValuesAs(streamed[i]), $"row {rows[i].Id} became {streamed[i]}");
    }

    [TestMethod]
    public async Task A_field_of_text_CDATA_and_entities_reads_as_their_text_joined_in_both_readers()
    {
        // What another writer may send for "a<b>c\r\n  d": XML's text content, however it is spelled.
        var xml = "<table>\n <record>\n  <ServiceTableID>7</ServiceTableID><DescServiceTable>a<![CDATA[<b>]]>c&#xD;&#xA;  d</DescServiceTable>" +
                  "<Value>1.5</Value><CreationDate>2014-05-10T13:45:00.0000000</CreationDate><StringField1></StringField1><StringField2>  </StringField2>\n </record>\n</table>\n";
        foreach (var records in new[] { RecordXml.ReadResponse(Utf8(xml)), await ReadStreamedAsync(new TrickleStream(Encoding.UTF8.GetBytes(xml))) })
        {
            Assert.HasCount(1, records);
            Assert.AreEqual(7, records[0].Id);
            Assert.AreEqual("a<b>c\r\n  d", records[0].Desc);
            Assert.AreEqual("", records[0].StringField1);
            Assert.AreEqual("  ", records[0].StringField2);
        }
    }

    [TestMethod]
    public async Task An_element_inside_a_field_or_an_id_fails_with_IT2001()
    {
        var xml = "<table><record><ServiceTableID>1</ServiceTableID><DescServiceTable>a<b/>c</DescServiceTable><Value>1</Value>" +
                  "<CreationDate>2014-05-10T13:45:00.0000000</CreationDate><StringField1/><StringField2/></record></table>";
        var e = await Assert.ThrowsExactlyAsync<IntegrationException>(() => ReadStreamedAsync(new TrickleStream(Encoding.UTF8.GetBytes(xml))));
        Assert.AreEqual(ErrorCodes.MalformedXml, e.Code, e.Message);
        StringAssert.Contains(e.Message, "<DescServiceTable> holds <b>");
        e = Assert.ThrowsExactly<IntegrationException>(() => ReadRequest("<request><id>1<x/></id></request>"));
        Assert.AreEqual(ErrorCodes.MalformedXml, e.Code, e.Message);
    }

    [TestMethod]
    public async Task A_request_arriving_a_byte_at_a_time_reads_whole()
    {
        using var buffer = new MemoryStream();
        RecordXml.WriteRequest(buffer, Enumerable.Range(1, 2000));
        CollectionAssert.AreEqual(Enumerable.Range(1, 2000).ToList(), await RecordXml.ReadRequestAsync(new TrickleStream(buffer.ToArray())));
    }

    private static async Task<List<ServiceRecord>> ReadStreamedAsync(Stream input)
    {
        using var reader = new RecordXml.ResponseReader(input);
        var records = new List<ServiceRecord>();
        while (await reader.ReadAsync() is { } record)
            records.Add(record);
        return records;
    }

    /// <summary>A network that delivers one byte per read, always asynchronously.</summary>
    private sealed class TrickleStream(byte[] data) : ReadOnlyTestStream
    {
        public override async ValueTask<int> ReadAsync(Memory<byte> buffer, CancellationToken cancellationToken = default)
        {
            await Task.Yield();
            if (Position32 == data.Length || buffer.Length == 0)
                return 0;
            buffer.Span[0] = data[Position32++];
            return 1;
        }

        public override int Read(byte[] buffer, int offset, int count) => throw new InvalidOperationException("read synchronously");
    }

    [TestMethod]
    // As numbers: an attribute's string is stored as UTF-8, which turns a lone surrogate into U+FFFD before the test sees it.
    [DataRow(0x07, " and on", DisplayName = "a control character")]
    [DataRow(0xD83D, " here", DisplayName = "a lone high surrogate")]
    [DataRow(0xDE00, "", DisplayName = "a lone low surrogate at the end")]
    [DataRow(0xFFFE, "", DisplayName = "a noncharacter")]
    public void A_value_XML_cannot_carry_fails_with_IT2003(int character, string after)
    {
        var record = new ServiceRecord(7, $"value {(char)character}{after}", 1, DateTime.Today, null, null);
        var e = Assert.ThrowsExactly<IntegrationException>(() => RecordXml.WriteResponse(new MemoryStream(), [record]));
        Assert.AreEqual(ErrorCodes.UnencodableValue, e.Code);
        StringAssert.Contains(e.Message, "Record 7");
    }

    [TestMethod]
    public void Long_text_round_trips_with_a_surrogate_pair_and_markup_on_every_block_edge()
    {
        // The writer escapes text in blocks of 16,384 characters: a pair or an escape at each edge must come through whole.
        var text = string.Concat(Enumerable.Range(0, 5).Select(i => new string('a', 16_383 - (i % 2)) + "😀<&\r\n>"));
        var record = new ServiceRecord(1, "d", 1, new DateTime(2014, 5, 10), null, null, PayloadText: text);
        using var body = new MemoryStream();
        RecordXml.WriteResponse(body, [record]);
        body.Position = 0;
        Assert.AreEqual(text, RecordXml.ReadResponse(body).Single().PayloadText);
    }

    [TestMethod]
    [DataRow("<table><record>" + Good, "Truncated XML <table>", DisplayName = "response cut short")]
    [DataRow("<table><record>" + Good + "</record><&/table>", "Malformed XML <table>", DisplayName = "response broken mid-way")]
    [DataRow("<request><id>1</id><id>2", "Truncated XML <request>", DisplayName = "request cut short")]
    [DataRow("<request><id>1</id><<id>2</id></request>", "Malformed XML <request>", DisplayName = "request broken mid-way")]
    public async Task A_message_cut_short_is_told_from_a_broken_one_by_where_its_input_ended_not_by_the_parsers_words(string xml, string expected)
    {
        // It was told by matching "Unexpected end of file" in XmlException's (localisable) message; now by the stream having ended.
        var e = xml.StartsWith("<request>", StringComparison.Ordinal)
            ? await Assert.ThrowsExactlyAsync<IntegrationException>(() => RecordXml.ReadRequestAsync(Utf8(xml)))
            : await Assert.ThrowsExactlyAsync<IntegrationException>(async () =>
            {
                using var streaming = new RecordXml.ResponseReader(Utf8(xml));
                while (await streaming.ReadAsync() is not null)
                {
                }
            });
        Assert.AreEqual(ErrorCodes.MalformedXml, e.Code);
        StringAssert.StartsWith(e.Message, expected);
    }

    [TestMethod]
    [DataRow(30_000)]
    [DataRow(60_000)]
    [DataRow(5_000_000)]
    public async Task Whitespace_between_elements_is_skipped_however_long_it_is(int spaces)
    {
        // XmlReader reports a whitespace run longer than its buffer as Text: 60,000 spaces inside <request> were refused (IT2001).
        var gap = new string(' ', spaces) + "\r\n\t";
        var request = $"<request>{gap}<id>1</id>{gap}<id>2</id>{gap}</request>{gap}";
        CollectionAssert.AreEqual(new[] { 1, 2 }, await RecordXml.ReadRequestAsync(Utf8(request)));

        using var response = new MemoryStream();
        RecordXml.WriteResponse(response, [SampleData.Create(7)]);
        var text = Encoding.UTF8.GetString(response.ToArray()).Replace("<record>", gap + "<record>" + gap, StringComparison.Ordinal)
            .Replace("</record>", "</record>" + gap, StringComparison.Ordinal);
        using var streaming = new RecordXml.ResponseReader(Utf8(text));
        Assert.AreEqual(SampleData.Create(7), await streaming.ReadAsync());
        Assert.IsNull(await streaming.ReadAsync());
    }

    [TestMethod]
    public async Task Text_between_elements_is_still_refused_after_a_long_whitespace_run()
    {
        var e = await Assert.ThrowsExactlyAsync<IntegrationException>(() =>
            RecordXml.ReadRequestAsync(Utf8("<request>" + new string(' ', 100_000) + "x<id>1</id></request>")));
        Assert.AreEqual(ErrorCodes.MalformedXml, e.Code);
        StringAssert.Contains(e.Message, "unexpected Text inside <request>");
    }

    private static List<int> ReadRequest(string xml) => RecordXml.ReadRequestAsync(Utf8(xml)).GetAwaiter().GetResult();

    private static MemoryStream Utf8(string text) => new(Encoding.UTF8.GetBytes(text));
}
