using System.Buffers.Binary;

namespace IntegrationTasks.Tests;

[TestClass]
[TestCategory("Unit")]
public sealed class FrameCodecTests
{
    [TestMethod]
    public async Task Frames_round_trip_and_a_zero_length_ends_the_transfer()
    {
        var stream = new MemoryStream();
        await FrameCodec.WriteAsync(stream, new byte[] { 1, 2, 3 }, CancellationToken.None);
        using (var buffer = new PooledBufferStream(4))
        {
            FrameCodec.BeginFrame(buffer);
            buffer.Write(new byte[100_000]);
            await stream.WriteAsync(FrameCodec.EndFrame(buffer));
        }
        await FrameCodec.WriteEndAsync(stream, CancellationToken.None);
        stream.Position = 0;

        using (var first = await FrameCodec.ReadAsync(stream, 1_000_000, CancellationToken.None))
            CollectionAssert.AreEqual(new byte[] { 1, 2, 3 }, first!.Memory.ToArray());
        using (var second = await FrameCodec.ReadAsync(stream, 1_000_000, CancellationToken.None))
            Assert.AreEqual(100_000, second!.Length);
        Assert.IsNull(await FrameCodec.ReadAsync(stream, 1_000_000, CancellationToken.None));
    }

    [TestMethod]
    public void The_header_is_eight_bytes_little_endian()
    {
        using var buffer = new PooledBufferStream();
        FrameCodec.BeginFrame(buffer);
        buffer.Write(new byte[258]);
        var frame = FrameCodec.EndFrame(buffer).ToArray();
        CollectionAssert.AreEqual(new byte[] { 2, 1, 0, 0, 0, 0, 0, 0 }, frame[..8]);
        Assert.HasCount(8 + 258, frame);
    }

    [TestMethod]
    public async Task An_oversized_length_is_refused_before_reading_the_payload()
    {
        // Only a header: if the codec tried to read (or allocate) the payload it would fail differently.
        var stream = new MemoryStream(Header(long.MaxValue));
        var e = await Assert.ThrowsExactlyAsync<IntegrationException>(() => FrameCodec.ReadAsync(stream, 1024, CancellationToken.None).AsTask());
        Assert.AreEqual(ErrorCodes.FrameTooLarge, e.Code);

        stream = new MemoryStream(Header(1025));
        e = await Assert.ThrowsExactlyAsync<IntegrationException>(() => FrameCodec.ReadAsync(stream, 1024, CancellationToken.None).AsTask());
        Assert.AreEqual(ErrorCodes.FrameTooLarge, e.Code);
    }

    [TestMethod]
    public async Task A_negative_length_is_refused()
    {
        var e = await Assert.ThrowsExactlyAsync<IntegrationException>(
            () => FrameCodec.ReadAsync(new MemoryStream(Header(-1)), 1024, CancellationToken.None).AsTask());
        Assert.AreEqual(ErrorCodes.InvalidFrameLength, e.Code);
    }

    [TestMethod]
    [DataRow(0, DisplayName = "nothing at all")]
    [DataRow(5, DisplayName = "half a header")]
    [DataRow(8 + 10, DisplayName = "half a payload")]
    public async Task A_stream_that_ends_early_is_a_truncated_frame(int bytes)
    {
        var data = Header(100).Concat(new byte[100]).Take(bytes).ToArray();
        var e = await Assert.ThrowsExactlyAsync<IntegrationException>(
            () => FrameCodec.ReadAsync(new MemoryStream(data), 1024, CancellationToken.None).AsTask());
        Assert.AreEqual(ErrorCodes.TruncatedFrame, e.Code);
    }

    [TestMethod]
    public async Task An_empty_payload_cannot_be_sent_as_a_frame()
    {
        await Assert.ThrowsExactlyAsync<ArgumentException>(() => FrameCodec.WriteAsync(new MemoryStream(), ReadOnlyMemory<byte>.Empty, CancellationToken.None).AsTask());
    }

    private static byte[] Header(long length)
    {
        var header = new byte[8];
        BinaryPrimitives.WriteInt64LittleEndian(header, length);
        return header;
    }
}
