using System.Buffers;
using System.Buffers.Binary;
using IntegrationTasks.Common;

namespace IntegrationTasks.Wire;

/// <summary>A received frame's payload in a pooled array; dispose it when done.</summary>
public sealed class Frame : IDisposable
{
    private byte[]? _array;

    internal Frame(byte[] array, int length)
    {
        _array = array;
        Length = length;
    }

    public int Length { get; }

    public ReadOnlyMemory<byte> Memory => (_array ?? throw new ObjectDisposedException(nameof(Frame))).AsMemory(0, Length);

    public Stream OpenRead() => new MemoryStream(_array ?? throw new ObjectDisposedException(nameof(Frame)), 0, Length, writable: false);

    public void Dispose()
    {
        var array = Interlocked.Exchange(ref _array, null);
        if (array is not null)
            ArrayPool<byte>.Shared.Return(array);
    }
}

/// <summary>
/// The series' TCP framing: an 8-byte little-endian length, then that many payload bytes; a zero
/// length ends the transfer. The declared length is checked against a maximum before anything is
/// allocated, and every short read (the peer closing mid-frame) is an error, not a corrupt length.
/// </summary>
public static class FrameCodec
{
    public const int HeaderSize = sizeof(long);
    public const int DefaultMaxFrameBytes = 64 * 1024 * 1024;

    /// <summary>Reads one frame; null for the zero-length end marker.</summary>
    public static async ValueTask<Frame?> ReadAsync(Stream stream, int maxFrameBytes, CancellationToken cancellationToken)
    {
        var header = new byte[HeaderSize];
        var read = await stream.ReadAtLeastAsync(header, HeaderSize, throwOnEndOfStream: false, cancellationToken).ConfigureAwait(false);
        if (read == 0)
            throw new IntegrationException(ErrorCodes.TruncatedFrame,
                "The connection closed before the end-of-transfer frame (zero length) arrived.");
        if (read < HeaderSize)
            throw new IntegrationException(ErrorCodes.TruncatedFrame,
                $"The connection closed inside a frame header ({read} of {HeaderSize} bytes).");
        var length = BinaryPrimitives.ReadInt64LittleEndian(header);
        if (length == 0)
            return null;
        if (length < 0)
            throw new IntegrationException(ErrorCodes.InvalidFrameLength, $"A frame declared a negative length ({length}).");
        if (length > maxFrameBytes)
            throw new IntegrationException(ErrorCodes.FrameTooLarge,
                $"A frame declared {length:N0} bytes, over the maximum of {maxFrameBytes:N0} (MaxFrameBytes); refused before reading it.");

        var size = (int)length;
        var array = ArrayPool<byte>.Shared.Rent(size);
        try
        {
            read = await stream.ReadAtLeastAsync(array.AsMemory(0, size), size, throwOnEndOfStream: false, cancellationToken)
                .ConfigureAwait(false);
            if (read < size)
                throw new IntegrationException(ErrorCodes.TruncatedFrame,
                    $"The connection closed inside a frame ({read:N0} of {size:N0} payload bytes).");
            return new Frame(array, size);
        }
        catch
        {
            ArrayPool<byte>.Shared.Return(array);
            throw;
        }
    }

    /// <summary>Writes a frame (header and payload); an empty payload would read as the end marker, so it is refused.</summary>
    public static async ValueTask WriteAsync(Stream stream, ReadOnlyMemory<byte> payload, CancellationToken cancellationToken)
    {
        if (payload.IsEmpty)
            throw new ArgumentException("An empty payload would be read as the end-of-transfer marker.", nameof(payload));
        var header = new byte[HeaderSize];
        BinaryPrimitives.WriteInt64LittleEndian(header, payload.Length);
        await stream.WriteAsync(header, cancellationToken).ConfigureAwait(false);
        await stream.WriteAsync(payload, cancellationToken).ConfigureAwait(false);
    }

    /// <summary>Starts a frame in a buffer: the header is reserved so header and payload go out in one write.</summary>
    public static void BeginFrame(PooledBufferStream buffer)
    {
        buffer.Reset();
        Span<byte> header = stackalloc byte[HeaderSize];
        header.Clear();
        buffer.Write(header);
    }

    /// <summary>Fills in the reserved header; returns the whole frame, ready to write.</summary>
    public static ReadOnlyMemory<byte> EndFrame(PooledBufferStream buffer)
    {
        var payloadLength = buffer.Length - HeaderSize;
        if (payloadLength <= 0)
            throw new InvalidOperationException("A frame needs a payload; an empty one would read as the end-of-transfer marker.");
        BinaryPrimitives.WriteInt64LittleEndian(buffer.WrittenSpan, payloadLength);
        return buffer.WrittenMemory;
    }

    public static ValueTask WriteEndAsync(Stream stream, CancellationToken cancellationToken) =>
        stream.WriteAsync(new byte[HeaderSize], cancellationToken);

    public static long FrameBytes(int payloadLength) => HeaderSize + payloadLength;
}
