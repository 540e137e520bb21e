using System.Buffers.Binary;

namespace IntegrationTasks.Tests;

[TestClass]
[TestCategory("Unit")]
public sealed class FrameBuilderTests
{
    [TestMethod]
    public void A_frame_is_header_then_payload_in_segments_of_at_most_64_KB()
    {
        using var frame = new FrameBuilder(FrameFormat.Tagged, maxPayloadBytes: 1 << 20, "test frame");
        var payload = Enumerable.Range(0, 200_000).Select(i => (byte)i).ToArray();
        frame.Write(payload, 0, 100_000);
        frame.Write(payload.AsSpan(100_000));
        frame.Complete(batchId: 42);

        var segments = frame.Segments.ToList();
        Assert.IsTrue(segments.All(s => s.Length <= FrameBuilder.SegmentBytes));
        var bytes = segments.SelectMany(s => s.ToArray()).ToArray();
        Assert.AreEqual(12 + payload.Length, bytes.Length);
        Assert.AreEqual(payload.Length, BinaryPrimitives.ReadInt64LittleEndian(bytes));
        Assert.AreEqual(42, BinaryPrimitives.ReadInt32LittleEndian(bytes.AsSpan(8)));
        CollectionAssert.AreEqual(payload, bytes[12..]);
    }

    [TestMethod]
    public void A_frame_growing_past_the_limit_is_refused_as_it_grows_not_once_built()
    {
        using var frame = new FrameBuilder(FrameFormat.Plain, maxPayloadBytes: 1000, "The response to batch 7");
        frame.Write(new byte[1000]);
        var e = Assert.ThrowsExactly<IntegrationException>(() => frame.WriteByte(1));
        Assert.AreEqual(ErrorCodes.FrameTooLarge, e.Code);
        StringAssert.StartsWith(e.Message, "The response to batch 7 would be over MaxFrameBytes");
        StringAssert.Contains(e.Message, "(1,000 bytes)");
    }

    [TestMethod]
    public void An_empty_frame_is_refused_because_it_would_read_as_the_end_marker()
    {
        using var frame = new FrameBuilder(FrameFormat.Plain, maxPayloadBytes: 1000, "empty");
        Assert.ThrowsExactly<InvalidOperationException>(() => frame.Complete(0));
    }
}
