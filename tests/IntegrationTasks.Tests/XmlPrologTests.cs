using System.Buffers;

namespace IntegrationTasks.Tests;

[TestClass]
[TestCategory("Unit")]
public sealed class XmlPrologTests
{
    [TestMethod]
    [DataRow("<!DOCTYPE a [<!ENTITY x \"1\">]><a>&x;</a>", PrologVerdict.Doctype, DisplayName = "internal subset")]
    [DataRow("\uFEFF<?xml version=\"1.0\"?>\r\n<!-- <a> -->\n<!DOCTYPE a SYSTEM \"http://x\"><a/>", PrologVerdict.Doctype, DisplayName = "after BOM, declaration and comment")]
    [DataRow("<?xml version=\"1.0\"?><!-- c --><s:Envelope xmlns:s=\"urn:x\">", PrologVerdict.Root, DisplayName = "root after declaration and comment")]
    [DataRow("<?xml version=\"1.0\"?><!-- not closed", PrologVerdict.NeedMore, DisplayName = "comment not closed yet")]
    [DataRow("<s:Envelope xmlns:s=\"urn", PrologVerdict.NeedMore, DisplayName = "start tag not closed yet")]
    [DataRow("hello", PrologVerdict.NotXml, DisplayName = "text")]
    public void The_prolog_is_judged_before_any_parser_runs(string message, PrologVerdict expected) =>
        Assert.AreEqual(expected, XmlProlog.Inspect(new ReadOnlySequence<byte>(Encoding.UTF8.GetBytes(message)), out _));

    [TestMethod]
    public void The_root_tag_is_returned_for_its_namespace_to_be_checked()
    {
        Assert.AreEqual(PrologVerdict.Root, XmlProlog.Inspect(new ReadOnlySequence<byte>("<e:Envelope xmlns:e=\"http://www.w3.org/2003/05/soap-envelope\"><e:Body>"u8.ToArray()), out var root));
        Assert.AreEqual("<e:Envelope xmlns:e=\"http://www.w3.org/2003/05/soap-envelope\">", root);
    }
}
