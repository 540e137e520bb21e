using System.IO.Compression;

namespace IntegrationTasks.Tests;

[TestClass]
[TestCategory("Unit")]
public sealed class SamplePayloadTests
{
    [TestMethod]
    [DataRow(PayloadKind.Bytes)]
    [DataRow(PayloadKind.Text)]
    public void A_payload_has_its_size_and_depends_only_on_seed_and_id(PayloadKind kind)
    {
        foreach (var size in new[] { 0, 1, 7, 100, 1024, 65_536 })
        {
            var payload = SamplePayload.Create(42, size, kind);
            Assert.HasCount(size, payload);
            CollectionAssert.AreEqual(payload, SamplePayload.Create(42, size, kind), $"{kind} {size}: the same row again");
        }
        CollectionAssert.AreNotEqual(SamplePayload.Create(42, 1024, kind), SamplePayload.Create(43, 1024, kind), "another row");
        CollectionAssert.AreNotEqual(SamplePayload.Create(42, 1024, kind), SamplePayload.Create(42, 1024, kind, seed: 7), "another seed");
    }

    [TestMethod]
    public void Half_of_a_bytes_payload_is_random_and_the_rest_repeats()
    {
        var payload = SamplePayload.Create(1, 65_536, PayloadKind.Bytes);
        using var compressed = new MemoryStream();
        using (var deflate = new DeflateStream(compressed, CompressionLevel.Optimal, leaveOpen: true))
            deflate.Write(payload);
        // The random half does not compress, the repeating half almost vanishes.
        var ratio = (double)compressed.Length / payload.Length;
        Assert.IsGreaterThanOrEqualTo(0.50, ratio);
        Assert.IsLessThanOrEqualTo(0.55, ratio);
    }

    [TestMethod]
    public void A_text_payload_is_whole_UTF8_with_what_XML_and_JSON_escape()
    {
        foreach (var size in new[] { 1, 5, 63, 1000, 4099 })
        {
            var text = new UTF8Encoding(false, throwOnInvalidBytes: true).GetString(SamplePayload.Create(9, size, PayloadKind.Text));
            Assert.AreEqual(size, Encoding.UTF8.GetByteCount(text), $"{size}: no character cut");
        }
        var long_ = Encoding.UTF8.GetString(SamplePayload.Create(9, 4096, PayloadKind.Text));
        foreach (var needed in new[] { "<", ">", "&", "\"", "'", "\r\n", "\t", "\\", "ç", "日", "😀" })
            StringAssert.Contains(long_, needed);
    }

    [TestMethod]
    public void An_unknown_kind_or_a_negative_size_is_a_coded_error()
    {
        Assert.AreEqual(PayloadKind.Text, PayloadKinds.Parse("text"));
        Assert.AreEqual(ErrorCodes.InvalidParameter, Assert.ThrowsExactly<IntegrationException>(() => PayloadKinds.Parse("Image")).Code);
        Assert.AreEqual(ErrorCodes.InvalidParameter, Assert.ThrowsExactly<IntegrationException>(() => SamplePayload.Create(1, -1, PayloadKind.Bytes)).Code);
    }
}
