using System.Globalization;
using System.Text;
using System.Xml;

namespace IntegrationTasks.Files;

/// <summary>
/// The simple extraction's request: <c>&lt;extract first="1" count="N"/&gt;</c>. The series sent three raw
/// bytes of a count (at most 16,777,215) and the server read four; this says what it means.
/// </summary>
public static class ExtractRequest
{
    public static void Write(Stream output, int first, int count)
    {
        using var writer = XmlWriter.Create(output, new XmlWriterSettings { Encoding = new UTF8Encoding(false), CloseOutput = false });
        writer.WriteStartElement("extract");
        writer.WriteAttributeString("first", first.ToString(CultureInfo.InvariantCulture));
        writer.WriteAttributeString("count", count.ToString(CultureInfo.InvariantCulture));
        writer.WriteEndElement();
    }

    public static (int First, int Count) Read(Stream input)
    {
        try
        {
            using var reader = XmlReader.Create(input, new XmlReaderSettings { DtdProcessing = DtdProcessing.Prohibit, XmlResolver = null, CloseInput = false });
            reader.MoveToContent();
            if (reader.NodeType != XmlNodeType.Element || reader.LocalName != "extract")
                throw new IntegrationException(ErrorCodes.MalformedXml, $"An extraction request must be <extract first=\"…\" count=\"…\"/>, not <{reader.LocalName}>.");
            var first = Attribute(reader, "first");
            var count = Attribute(reader, "count");
            if (first < 1 || count < 1 || (long)first + count - 1 > int.MaxValue)
                throw new IntegrationException(ErrorCodes.InvalidFieldValue, $"An extraction of {count} records from ID {first} is out of range.");
            while (reader.Read())
            {
            }
            return (first, count);
        }
        catch (XmlException e)
        {
            throw new IntegrationException(ErrorCodes.MalformedXml, $"Malformed extraction request at line {e.LineNumber}, position {e.LinePosition}: {e.Message}", e);
        }
    }

    private static int Attribute(XmlReader reader, string name) =>
        int.TryParse(reader.GetAttribute(name), NumberStyles.None, CultureInfo.InvariantCulture, out var value)
            ? value
            : throw new IntegrationException(ErrorCodes.InvalidFieldValue, $"<extract {name}=\"{reader.GetAttribute(name)}\"> is not a whole number.");
}
