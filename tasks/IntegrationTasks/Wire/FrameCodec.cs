using System.Buffers.Binary;

namespace IntegrationTasks.Wire;

/// <summary>A received frame's payload in a pooled array; dispose it when done.</summary>
public sealed class Frame : IDisposable
{
    private byte[]? _array;

    internal Frame(byte[] array, int length, int batchId)
    {
        _array = array;
        Length = length;
        BatchId = batchId;
    }

    public int Length { get; }

    /// <summary>The batch id of a tagged frame (the series' TCP 3); 0 in the plain format.</summary>
    public int BatchId { get; }

    internal byte[] Array => _array ?? throw new ObjectDisposedException(nameof(Frame));

    public ReadOnlyMemory<byte> Memory => Array.AsMemory(0, Length);

    public Stream OpenRead() => new MemoryStream(Array, 0, Length, writable: false, publiclyVisible: true);

    public void Dispose()
    {
        var array = Interlocked.Exchange(ref _array, null);
        if (array is not null)
            Buffers.Return(array);
    }

    internal static Frame Rent(int length, int batchId) => new(Buffers.Rent(length), length, batchId);
}

/// <summary>
/// The series' TCP framing: an 8-byte little-endian length, then that many payload bytes; a zero
/// length ends the transfer. <see cref="Tagged"/> adds a 4-byte batch id after the length (the
/// series' TCP 3), and its end marker is a whole zero header (the series sent only 8 bytes there).
/// </summary>
public sealed class FrameFormat
{
    public static readonly FrameFormat Plain = new(sizeof(long), carriesBatchId: false);
    public static readonly FrameFormat Tagged = new(sizeof(long) + sizeof(int), carriesBatchId: true);

    private FrameFormat(int headerSize, bool carriesBatchId)
    {
        HeaderSize = headerSize;
        CarriesBatchId = carriesBatchId;
    }

    public int HeaderSize { get; }
    public bool CarriesBatchId { get; }

    /// <summary>
    /// Checks a header before anything is allocated for its payload: a negative or oversized length
    /// is refused here. Returns the payload length (0 for the end marker) and the batch id.
    /// </summary>
    public (int Length, int BatchId) ParseHeader(ReadOnlySpan<byte> header, int maxFrameBytes)
    {
        var length = BinaryPrimitives.ReadInt64LittleEndian(header);
        var batchId = CarriesBatchId ? BinaryPrimitives.ReadInt32LittleEndian(header[sizeof(long)..]) : 0;
        if (length < 0)
            throw new IntegrationException(ErrorCodes.InvalidFrameLength, $"A frame declared a negative length ({length}).");
        if (length > maxFrameBytes)
            throw new IntegrationException(ErrorCodes.FrameTooLarge,
                $"A frame declared {length:N0} bytes, over the maximum of {maxFrameBytes:N0} (MaxFrameBytes); refused before reading it.");
        return ((int)length, batchId);
    }

    public void WriteHeader(Span<byte> header, int length, int batchId)
    {
        BinaryPrimitives.WriteInt64LittleEndian(header, length);
        if (CarriesBatchId)
            BinaryPrimitives.WriteInt32LittleEndian(header[sizeof(long)..], batchId);
    }

    public byte[] EndMarker() => new byte[HeaderSize];
}

/// <summary>Reading and writing frames on a stream; every short read (the peer closing mid-frame) is an error.</summary>
public static class FrameCodec
{
    public const int HeaderSize = sizeof(long);

    public static ValueTask<Frame?> ReadAsync(Stream stream, int maxFrameBytes, CancellationToken cancellationToken) =>
        ReadAsync(stream, FrameFormat.Plain, maxFrameBytes, cancellationToken);

    /// <summary>Reads one frame; null for the end marker.</summary>
    public static async ValueTask<Frame?> ReadAsync(Stream stream, FrameFormat format, int maxFrameBytes, CancellationToken cancellationToken)
    {
        var (length, batchId) = await ReadHeaderAsync(stream, format, maxFrameBytes, cancellationToken).ConfigureAwait(false);
        if (length == 0)
            return null;

        var frame = Frame.Rent(length, batchId);
        try
        {
            var read = await stream.ReadAtLeastAsync(frame.Array.AsMemory(0, length), length, throwOnEndOfStream: false, cancellationToken)
                .ConfigureAwait(false);
            if (read < length)
                throw TruncatedPayload(read, length);
            return frame;
        }
        catch
        {
            frame.Dispose();
            throw;
        }
    }

    /// <summary>Reads and checks one frame header: the payload's length (0 for the end marker) and the batch id.</summary>
    public static async ValueTask<(int Length, int BatchId)> ReadHeaderAsync(Stream stream, FrameFormat format, int maxFrameBytes,
        CancellationToken cancellationToken)
    {
        var header = new byte[format.HeaderSize];
        var read = await stream.ReadAtLeastAsync(header, header.Length, throwOnEndOfStream: false, cancellationToken).ConfigureAwait(false);
        if (read == 0)
            throw ClosedBeforeEndMarker();
        if (read < header.Length)
            throw TruncatedHeader(read, header.Length);
        return format.ParseHeader(header, maxFrameBytes);
    }

    internal static IntegrationException ClosedBeforeEndMarker() => new(ErrorCodes.TruncatedFrame,
        "The connection closed before the end-of-transfer frame (zero length) arrived.");

    internal static IntegrationException TruncatedHeader(long read, int size) => new(ErrorCodes.TruncatedFrame,
        $"The connection closed inside a frame header ({read} of {size} bytes).");

    internal static IntegrationException TruncatedPayload(long read, int size) => new(ErrorCodes.TruncatedFrame,
        size >= 0
            ? $"The connection closed inside a frame ({read:N0} of {size:N0} payload bytes)."
            : $"The connection closed inside a frame ({read:N0} payload bytes had arrived).");

    /// <summary>Writes a frame (header and payload); an empty payload would read as the end marker, so it is refused.</summary>
    public static async ValueTask WriteAsync(Stream stream, ReadOnlyMemory<byte> payload, CancellationToken cancellationToken)
    {
        if (payload.IsEmpty)
            throw new ArgumentException("An empty payload would be read as the end-of-transfer marker.", nameof(payload));
        var header = new byte[HeaderSize];
        FrameFormat.Plain.WriteHeader(header, payload.Length, 0);
        await stream.WriteAsync(header, cancellationToken).ConfigureAwait(false);
        await stream.WriteAsync(payload, cancellationToken).ConfigureAwait(false);
    }

    /// <summary>Starts a frame in a buffer: the header is reserved so header and payload go out in one write.</summary>
    public static void BeginFrame(PooledBufferStream buffer, FrameFormat? format = null)
    {
        buffer.Reset();
        Span<byte> header = stackalloc byte[(format ?? FrameFormat.Plain).HeaderSize];
        header.Clear();
        buffer.Write(header);
    }

    /// <summary>Fills in the reserved header; returns the whole frame, ready to write.</summary>
    public static ReadOnlyMemory<byte> EndFrame(PooledBufferStream buffer, FrameFormat? format = null, int batchId = 0)
    {
        format ??= FrameFormat.Plain;
        var payloadLength = buffer.Length - format.HeaderSize;
        if (payloadLength <= 0)
            throw new InvalidOperationException("A frame needs a payload; an empty one would read as the end-of-transfer marker.");
        format.WriteHeader(buffer.WrittenSpan, (int)payloadLength, batchId);
        return buffer.WrittenMemory;
    }

    public static ValueTask WriteEndAsync(Stream stream, CancellationToken cancellationToken) =>
        stream.WriteAsync(FrameFormat.Plain.EndMarker(), cancellationToken);

    public static long FrameBytes(int payloadLength) => HeaderSize + payloadLength;
}
