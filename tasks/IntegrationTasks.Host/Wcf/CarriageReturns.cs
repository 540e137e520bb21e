using System.ServiceModel.Channels;
using System.Xml;
using SoapCore.Extensibility;

namespace IntegrationTasks.Host.Wcf;

/// <summary>
/// SoapCore writes a carriage return inside a value as a raw CR, which every XML parser turns into a line
/// feed on reading: "a\r\nb" would arrive as "a\nb". This processor writes each response through a writer
/// that emits CR as the character reference &amp;#xD;, which parsers keep — values round-trip exactly.
/// </summary>
internal sealed class CarriageReturnPreservingProcessor : ISoapMessageProcessor
{
    public async Task<Message> ProcessMessage(Message message, HttpContext context, Func<Message, Task<Message>> next)
    {
        var response = await next(message);
        return response.IsFault ? response : new PreservingMessage(response);
    }

    private sealed class PreservingMessage(Message inner) : Message
    {
        public override MessageHeaders Headers => inner.Headers;
        public override MessageProperties Properties => inner.Properties;
        public override MessageVersion Version => inner.Version;

        protected override void OnWriteMessage(XmlDictionaryWriter writer) => inner.WriteMessage(new CarriageReturnEntitizingWriter(writer));

        protected override void OnWriteBodyContents(XmlDictionaryWriter writer) => inner.WriteBodyContents(new CarriageReturnEntitizingWriter(writer));
    }
}

/// <summary>Passes everything to the writer it wraps, except that a CR in text becomes &amp;#xD;.</summary>
internal sealed class CarriageReturnEntitizingWriter(XmlDictionaryWriter inner) : XmlDictionaryWriter
{
    public override void WriteString(string? text)
    {
        if (text is null || !text.Contains('\r'))
        {
            inner.WriteString(text);
            return;
        }
        var start = 0;
        for (var cr = text.IndexOf('\r'); cr >= 0; cr = text.IndexOf('\r', start))
        {
            if (cr > start)
                inner.WriteString(text[start..cr]);
            inner.WriteCharEntity('\r');
            start = cr + 1;
        }
        if (start < text.Length)
            inner.WriteString(text[start..]);
    }

    public override void WriteChars(char[] buffer, int index, int count) => WriteString(new string(buffer, index, count));

    public override WriteState WriteState => inner.WriteState;
    public override void Flush() => inner.Flush();
    public override string? LookupPrefix(string ns) => inner.LookupPrefix(ns);
    public override void WriteBase64(byte[] buffer, int index, int count) => inner.WriteBase64(buffer, index, count);
    public override void WriteCData(string? text) => inner.WriteCData(text);
    public override void WriteCharEntity(char ch) => inner.WriteCharEntity(ch);
    public override void WriteComment(string? text) => inner.WriteComment(text);
    public override void WriteDocType(string name, string? pubid, string? sysid, string? subset) => inner.WriteDocType(name, pubid, sysid, subset);
    public override void WriteEndAttribute() => inner.WriteEndAttribute();
    public override void WriteEndDocument() => inner.WriteEndDocument();
    public override void WriteEndElement() => inner.WriteEndElement();
    public override void WriteEntityRef(string name) => inner.WriteEntityRef(name);
    public override void WriteFullEndElement() => inner.WriteFullEndElement();
    public override void WriteProcessingInstruction(string name, string? text) => inner.WriteProcessingInstruction(name, text);
    public override void WriteRaw(char[] buffer, int index, int count) => inner.WriteRaw(buffer, index, count);
    public override void WriteRaw(string data) => inner.WriteRaw(data);
    public override void WriteStartAttribute(string? prefix, string localName, string? ns) => inner.WriteStartAttribute(prefix, localName, ns);
    public override void WriteStartDocument() => inner.WriteStartDocument();
    public override void WriteStartDocument(bool standalone) => inner.WriteStartDocument(standalone);
    public override void WriteStartElement(string? prefix, string localName, string? ns) => inner.WriteStartElement(prefix, localName, ns);
    public override void WriteSurrogateCharEntity(char lowChar, char highChar) => inner.WriteSurrogateCharEntity(lowChar, highChar);
    public override void WriteWhitespace(string? ws) => inner.WriteWhitespace(ws);
}
