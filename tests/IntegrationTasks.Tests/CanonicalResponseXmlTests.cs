namespace IntegrationTasks.Tests;

/// <summary>
/// The in-place reader of the suite's own XML form: it reads what the writer writes to the same rows XmlReader reads, and leaves
/// every other form — well formed or not — to XmlReader.
/// </summary>
[TestClass]
[TestCategory("Unit")]
public sealed class CanonicalResponseXmlTests
{
    private static string Golden(string file) => Path.Combine(RepositoryPaths.Root, "tests", "IntegrationTasks.Tests", "Golden", file);

    /// <summary>Through XmlReader only: a stream whose buffer is not visible is never read in place.</summary>
    private static List<ServiceRecord> ThroughXmlReader(byte[] message) => RecordXml.ReadResponse(new MemoryStream(message));

    [TestMethod]
    [DataRow("xml-response-none.xml")]
    [DataRow("xml-response-bytes.xml")]
    [DataRow("xml-response-text.xml")]
    public void What_the_writer_writes_is_read_in_place_to_the_rows_XmlReader_reads(string file)
    {
        var message = File.ReadAllBytes(Golden(file));
        Assert.IsTrue(CanonicalResponseXml.TryRead(message, out var rows));
        RowChecks.AssertSameRows(ThroughXmlReader(message), rows, "in place");
        Assert.IsNotEmpty(rows);
        // And the public path takes it from a stream whose buffer it can see.
        RowChecks.AssertSameRows(rows, RecordXml.ReadResponse(new MemoryStream(message, 0, message.Length, writable: false, publiclyVisible: true)), "in place");
    }

    [TestMethod]
    public void An_empty_table_as_the_writer_writes_it_is_read_in_place()
    {
        using var buffer = new MemoryStream();
        RecordXml.WriteResponse(buffer, []);
        var message = buffer.ToArray();
        Assert.IsTrue(CanonicalResponseXml.TryRead(message, out var rows));
        Assert.IsEmpty(rows);
        Assert.IsEmpty(ThroughXmlReader(message));
    }

    private const string Row = "<ServiceTableID>5</ServiceTableID><DescServiceTable>{0}</DescServiceTable><Value>1.5</Value>"
                               + "<CreationDate>2014-05-10T13:45:00.0000000</CreationDate><StringField1>a</StringField1><StringField2 nil=\"true\" />";

    [TestMethod]
    [DataRow("<table><record>" + Row + "</record></table>", "x &lt;&amp;&gt; &quot;&apos; &#xD;&#xA;&#x9; ✓ 😀", true, DisplayName = "the entities the writer uses")]
    [DataRow("<table><record>" + Row + "</record></table>", "", true, DisplayName = "empty text")]
    [DataRow("<table><record>" + Row + "</record></table>", "a<!-- note -->b", false, DisplayName = "a comment")]
    [DataRow("<table><record>" + Row + "</record></table>", "<![CDATA[<b>]]>", false, DisplayName = "CDATA")]
    [DataRow("<table><record>" + Row + "</record></table>", "line\r\nbreak", false, DisplayName = "a raw CR (XmlReader normalises it)")]
    [DataRow("<table><record>" + Row + "</record></table>", "&#65;&#x42;", false, DisplayName = "other character references")]
    [DataRow("<table>\n<record>" + Row + "</record>\n</table>", "d", false, DisplayName = "whitespace between elements")]
    [DataRow("\uFEFF<table><record>" + Row + "</record></table>", "d", false, DisplayName = "a byte order mark")]
    [DataRow("<?xml version=\"1.0\"?><table><record>" + Row + "</record></table>", "d", false, DisplayName = "another declaration")]
    public void Another_well_formed_form_is_left_to_XmlReader_and_reads_the_same(string template, string desc, bool inPlace)
    {
        var message = Encoding.UTF8.GetBytes(string.Format(System.Globalization.CultureInfo.InvariantCulture, template, desc));
        Assert.AreEqual(inPlace, CanonicalResponseXml.TryRead(message, out var rows));
        var expected = ThroughXmlReader(message);
        if (inPlace)
            RowChecks.AssertSameRows(expected, rows, "in place");
        RowChecks.AssertSameRows(expected, RecordXml.ReadResponse(new MemoryStream(message, 0, message.Length, writable: false, publiclyVisible: true)), "in place");
    }

    [TestMethod]
    [DataRow("<table><record>" + Row + "</record>", DisplayName = "cut short")]
    [DataRow("<table><record>" + Row + "</record></tabel>", DisplayName = "a wrong end tag")]
    [DataRow("<table><record>" + Row + "<Payload>AAE*</Payload></record></table>", DisplayName = "a payload that is not base64")]
    [DataRow("<table><record>" + Row + "</record></table>x", DisplayName = "content after the table")]
    [DataRow("<table><record><ServiceTableID>x</ServiceTableID></record></table>", DisplayName = "an ID that is no number")]
    [DataRow("<table><record>" + Row + "</record></table><", DisplayName = "markup after the table")]
    public void A_broken_message_is_never_read_in_place_and_XmlReader_refuses_it_with_a_code(string template)
    {
        var message = Encoding.UTF8.GetBytes(string.Format(System.Globalization.CultureInfo.InvariantCulture, template, "d"));
        Assert.IsFalse(CanonicalResponseXml.TryRead(message, out _));
        var e = Assert.ThrowsExactly<IntegrationException>(() =>
            RecordXml.ReadResponse(new MemoryStream(message, 0, message.Length, writable: false, publiclyVisible: true)));
        Assert.IsTrue(e.Code is ErrorCodes.MalformedXml or ErrorCodes.InvalidFieldValue, e.Code);
    }

    [TestMethod]
    [DataRow("<ServiceTableID>5\u0000</ServiceTableID>", "<ServiceTableID>5</ServiceTableID>", DisplayName = "a NUL after the ID")]
    [DataRow("<Value>\u000B1.5\u000C</Value>", "<Value>1.5</Value>", DisplayName = "vertical tab and form feed around the value")]
    [DataRow("<CreationDate>2014-05-10T13:45:00.0000000\u0000</CreationDate>", "<CreationDate>2014-05-10T13:45:00.0000000</CreationDate>", DisplayName = "a NUL after the date")]
    public void A_number_or_date_with_a_character_XML_forbids_is_never_read_in_place(string bad, string good)
    {
        // .NET's parsing takes these as nothing; XmlReader refuses them.
        var message = Encoding.UTF8.GetBytes(string.Format(System.Globalization.CultureInfo.InvariantCulture, "<table><record>" + Row + "</record></table>", "d").Replace(good, bad, StringComparison.Ordinal));
        Assert.IsFalse(CanonicalResponseXml.TryRead(message, out _));
        Assert.AreEqual(ErrorCodes.MalformedXml, Assert.ThrowsExactly<IntegrationException>(() =>
            RecordXml.ReadResponse(new MemoryStream(message, 0, message.Length, writable: false, publiclyVisible: true))).Code);
    }

    [TestMethod]
    public void Bytes_that_are_not_UTF8_and_characters_XML_forbids_are_left_to_XmlReader()
    {
        var good = Encoding.UTF8.GetBytes(string.Format(System.Globalization.CultureInfo.InvariantCulture, "<table><record>" + Row + "</record></table>", "d@"));
        var at = Array.IndexOf(good, (byte)'@');
        foreach (var bad in new byte[] { 0xFF, 0x01, 0xC0 })
        {
            var message = (byte[])good.Clone();
            message[at] = bad;
            Assert.IsFalse(CanonicalResponseXml.TryRead(message, out _), $"0x{bad:X2}");
            Assert.ThrowsExactly<IntegrationException>(() => ThroughXmlReader(message));
        }
    }
}
