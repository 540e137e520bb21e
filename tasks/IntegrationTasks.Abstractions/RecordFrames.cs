using System.Buffers;
using System.Buffers.Binary;
using System.Text;

namespace IntegrationTasks.Abstractions;

/// <summary>
/// A framing a transport may use over any stream: each message a 4-byte little-endian length and its body; a request names a batch,
/// a reply carries the batch's records with every value exact (doubles by their bits, dates by their ticks, NULL apart from empty).
/// </summary>
public static class RecordFrames
{
    private const byte RequestTag = (byte)'Q';
    private const byte RecordsTag = (byte)'R';
    private static readonly UTF8Encoding Utf8 = new(encoderShouldEmitUTF8Identifier: false, throwOnInvalidBytes: true);

    /// <summary>The bytes a request takes on the wire, its length included.</summary>
    public const int RequestFrameBytes = 4 + 13;

    /// <summary>Writes a request for one batch (<see cref="RequestFrameBytes"/> bytes).</summary>
    public static ValueTask WriteRequestAsync(Stream stream, RequestedBatch batch, CancellationToken cancellationToken)
    {
        var frame = new byte[RequestFrameBytes];
        BinaryPrimitives.WriteInt32LittleEndian(frame, 13);
        frame[4] = RequestTag;
        BinaryPrimitives.WriteInt32LittleEndian(frame.AsSpan(5), batch.Index);
        BinaryPrimitives.WriteInt32LittleEndian(frame.AsSpan(9), batch.FirstId);
        BinaryPrimitives.WriteInt32LittleEndian(frame.AsSpan(13), batch.Count);
        return stream.WriteAsync(frame, cancellationToken);
    }

    /// <summary>Reads a request; null when the other side closed the stream between messages.</summary>
    public static async ValueTask<RequestedBatch?> ReadRequestAsync(Stream stream, CancellationToken cancellationToken)
    {
        using var body = await ReadFrameAsync(stream, 13, cancellationToken).ConfigureAwait(false);
        if (body is null)
            return null;
        var span = body.Span;
        if (span.Length != 13 || span[0] != RequestTag)
            throw new TransportException(TransportError.MalformedMessage, $"A request frame of {span.Length} bytes is not a request.");
        var batch = new RequestedBatch(BinaryPrimitives.ReadInt32LittleEndian(span[1..]), BinaryPrimitives.ReadInt32LittleEndian(span[5..]),
            BinaryPrimitives.ReadInt32LittleEndian(span[9..]));
        if (batch.Index < 0 || batch.FirstId < 1 || batch.Count < 1 || (long)batch.FirstId + batch.Count - 1 > int.MaxValue)
            throw new TransportException(TransportError.MalformedMessage,
                $"A request for batch {batch.Index} of {batch.Count} records from ID {batch.FirstId} names no batch.");
        return batch;
    }

    /// <summary>Writes a batch's records as one reply; returns the bytes written, its length included.</summary>
    public static async ValueTask<int> WriteRecordsAsync(Stream stream, RequestedBatch batch, IReadOnlyList<ServiceRecord> records,
        CancellationToken cancellationToken)
    {
        var writer = new ArrayBufferWriter<byte>(64 + records.Count * 96);
        var header = writer.GetSpan(13);
        header[4] = RecordsTag;
        BinaryPrimitives.WriteInt32LittleEndian(header[5..], batch.Index);
        BinaryPrimitives.WriteInt32LittleEndian(header[9..], records.Count);
        writer.Advance(13);
        foreach (var record in records)
            Write(writer, record);
        var frame = writer.WrittenMemory;
        BinaryPrimitives.WriteInt32LittleEndian(MemoryMarshalSpan(frame), frame.Length - 4);
        await stream.WriteAsync(frame, cancellationToken).ConfigureAwait(false);
        return frame.Length;
    }

    /// <summary>
    /// Reads one reply: the batch's index, its records and the bytes it took; null when the other side closed the stream between
    /// messages. A reply longer than <paramref name="maxFrameBytes"/> is refused before it is read (<see cref="TransportError.FrameTooLarge"/>).
    /// </summary>
    public static async ValueTask<RecordsReply?> ReadRecordsAsync(Stream stream, int maxFrameBytes,
        CancellationToken cancellationToken)
    {
        using var body = await ReadFrameAsync(stream, maxFrameBytes, cancellationToken).ConfigureAwait(false);
        if (body is null)
            return null;
        var reader = new FrameReader(body.Memory);
        if (reader.Byte() != RecordsTag)
            throw new TransportException(TransportError.MalformedMessage, "A reply frame is not a batch of records.");
        var index = reader.Int32();
        var count = reader.Int32();
        if (count < 0 || count > body.Memory.Length)
            throw new TransportException(TransportError.MalformedMessage, $"A reply says it holds {count} records.");
        var records = new ServiceRecord[count];
        for (var i = 0; i < count; i++)
            records[i] = reader.Record();
        if (!reader.AtEnd)
            throw new TransportException(TransportError.MalformedMessage, "A reply frame has bytes after its records.");
        return new RecordsReply(index, records, 4 + body.Memory.Length);
    }

    /// <summary>One reply as read: which batch (its index in the client's session), its records, and its size on the wire.</summary>
    public sealed record RecordsReply(int BatchIndex, IReadOnlyList<ServiceRecord> Records, int FrameBytes);

    private static Span<byte> MemoryMarshalSpan(ReadOnlyMemory<byte> memory) =>
        System.Runtime.InteropServices.MemoryMarshal.AsMemory(memory).Span;

    private static async ValueTask<FrameBody?> ReadFrameAsync(Stream stream, int maxFrameBytes, CancellationToken cancellationToken)
    {
        var prefix = new byte[4];
        var read = await stream.ReadAtLeastAsync(prefix, 4, throwOnEndOfStream: false, cancellationToken).ConfigureAwait(false);
        if (read == 0)
            return null;
        if (read < 4)
            throw new TransportException(TransportError.ConnectionLost, "The stream ended inside a frame's length.");
        var length = BinaryPrimitives.ReadInt32LittleEndian(prefix);
        if (length < 1)
            throw new TransportException(TransportError.MalformedMessage, $"A frame says it is {length} bytes long.");
        if (length > maxFrameBytes)
            throw new TransportException(TransportError.FrameTooLarge, $"A frame of {length:N0} bytes is larger than the {maxFrameBytes:N0} accepted (MaxFrameBytes).");
        var body = new FrameBody(length);
        try
        {
            if (await stream.ReadAtLeastAsync(body.Buffer.AsMemory(0, length), length, throwOnEndOfStream: false, cancellationToken).ConfigureAwait(false) < length)
                throw new TransportException(TransportError.ConnectionLost, $"The stream ended inside a frame of {length:N0} bytes.");
            return body;
        }
        catch
        {
            body.Dispose();
            throw;
        }
    }

    private static void Write(ArrayBufferWriter<byte> writer, ServiceRecord record)
    {
        var fixedPart = writer.GetSpan(21);
        BinaryPrimitives.WriteInt32LittleEndian(fixedPart, record.Id);
        BinaryPrimitives.WriteInt64LittleEndian(fixedPart[4..], BitConverter.DoubleToInt64Bits(record.Value));
        BinaryPrimitives.WriteInt64LittleEndian(fixedPart[12..], record.CreationDate.Ticks);
        fixedPart[20] = (byte)record.CreationDate.Kind;
        writer.Advance(21);
        WriteString(writer, record.Desc);
        WriteString(writer, record.StringField1);
        WriteString(writer, record.StringField2);
        if (record.Payload is { } bytes)
        {
            WriteByte(writer, 1);
            WriteBytes(writer, bytes);
        }
        else if (record.PayloadText is { } text)
        {
            WriteByte(writer, 2);
            WriteString(writer, text);
        }
        else
        {
            WriteByte(writer, 0);
        }
    }

    private static void WriteByte(ArrayBufferWriter<byte> writer, byte value)
    {
        writer.GetSpan(1)[0] = value;
        writer.Advance(1);
    }

    private static void WriteString(ArrayBufferWriter<byte> writer, string? value)
    {
        if (value is null)
        {
            BinaryPrimitives.WriteInt32LittleEndian(writer.GetSpan(4), -1);
            writer.Advance(4);
            return;
        }
        var length = Utf8.GetByteCount(value);
        var span = writer.GetSpan(4 + length);
        BinaryPrimitives.WriteInt32LittleEndian(span, length);
        Utf8.GetBytes(value, span[4..]);
        writer.Advance(4 + length);
    }

    private static void WriteBytes(ArrayBufferWriter<byte> writer, byte[] value)
    {
        var span = writer.GetSpan(4 + value.Length);
        BinaryPrimitives.WriteInt32LittleEndian(span, value.Length);
        value.CopyTo(span[4..]);
        writer.Advance(4 + value.Length);
    }

    private sealed class FrameBody(int length) : IDisposable
    {
        public byte[] Buffer { get; } = ArrayPool<byte>.Shared.Rent(length);
        public ReadOnlyMemory<byte> Memory => Buffer.AsMemory(0, length);
        public ReadOnlySpan<byte> Span => Buffer.AsSpan(0, length);
        public void Dispose() => ArrayPool<byte>.Shared.Return(Buffer);
    }

    private struct FrameReader(ReadOnlyMemory<byte> memory)
    {
        private int _at;

        public readonly bool AtEnd => _at == memory.Length;

        private ReadOnlySpan<byte> Take(int count)
        {
            if (count < 0 || memory.Length - _at < count)
                throw new TransportException(TransportError.MalformedMessage, "A reply frame ends inside a record.");
            var span = memory.Span.Slice(_at, count);
            _at += count;
            return span;
        }

        public byte Byte() => Take(1)[0];

        public int Int32() => BinaryPrimitives.ReadInt32LittleEndian(Take(4));

        private long Int64() => BinaryPrimitives.ReadInt64LittleEndian(Take(8));

        private string? String()
        {
            var length = Int32();
            if (length == -1)
                return null;
            try
            {
                return Utf8.GetString(Take(length));
            }
            catch (DecoderFallbackException e)
            {
                throw new TransportException(TransportError.MalformedMessage, "A reply frame holds text that is not UTF-8.", e);
            }
        }

        public ServiceRecord Record()
        {
            var id = Int32();
            var value = BitConverter.Int64BitsToDouble(Int64());
            var ticks = Int64();
            var kind = Byte();
            if (ticks < DateTime.MinValue.Ticks || ticks > DateTime.MaxValue.Ticks || kind > (byte)DateTimeKind.Local)
                throw new TransportException(TransportError.MalformedMessage, $"Record {id}'s date is out of range.");
            var desc = String() ?? throw new TransportException(TransportError.MalformedMessage, $"Record {id} has no Desc.");
            var field1 = String();
            var field2 = String();
            return Byte() switch
            {
                0 => new ServiceRecord(id, desc, value, new DateTime(ticks, (DateTimeKind)kind), field1, field2),
                1 => new ServiceRecord(id, desc, value, new DateTime(ticks, (DateTimeKind)kind), field1, field2, Payload: Take(Int32()).ToArray()),
                2 => new ServiceRecord(id, desc, value, new DateTime(ticks, (DateTimeKind)kind), field1, field2, PayloadText: String()
                    ?? throw new TransportException(TransportError.MalformedMessage, $"Record {id}'s text payload is NULL.")),
                var tag => throw new TransportException(TransportError.MalformedMessage, $"Record {id} has an unknown payload tag {tag}."),
            };
        }
    }
}
