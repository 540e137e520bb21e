using System.Buffers;
using System.IO.Pipelines;
using IntegrationTasks.Wire;

namespace IntegrationTasks.Tcp;

/// <summary>How a TCP generation does its socket I/O; the threading models above it are the same.</summary>
public enum TcpIo
{
    /// <summary>async/await on the NetworkStream, exact reads per header and payload.</summary>
    Streams,

    /// <summary>System.IO.Pipelines: large buffered reads, frames parsed out of the pipe (the series' TCP 4, today's idiom).</summary>
    Pipelines,
}

/// <summary>Frames over one TCP connection, counting bytes both ways.</summary>
public abstract class FrameConnection : IAsyncDisposable
{
    protected FrameConnection(FrameFormat format, int maxFrameBytes)
    {
        Format = format;
        MaxFrameBytes = maxFrameBytes;
    }

    public FrameFormat Format { get; }
    public int MaxFrameBytes { get; }
    public long BytesRead { get; protected set; }
    public long BytesWritten { get; protected set; }

    public static FrameConnection Create(TcpIo io, Stream stream, FrameFormat format, int maxFrameBytes) => io switch
    {
        TcpIo.Pipelines => new PipeFrameConnection(stream, format, maxFrameBytes),
        _ => new StreamFrameConnection(stream, format, maxFrameBytes),
    };

    /// <summary>The next frame, or null for the end marker.</summary>
    public abstract ValueTask<Frame?> ReadAsync(CancellationToken cancellationToken);

    /// <summary>Writes a whole frame (header included), as built by <see cref="FrameCodec.EndFrame"/>.</summary>
    public abstract ValueTask WriteAsync(ReadOnlyMemory<byte> frame, CancellationToken cancellationToken);

    public ValueTask WriteEndAsync(CancellationToken cancellationToken) => WriteAsync(Format.EndMarker(), cancellationToken);

    public abstract ValueTask DisposeAsync();
}

internal sealed class StreamFrameConnection(Stream stream, FrameFormat format, int maxFrameBytes) : FrameConnection(format, maxFrameBytes)
{
    public override async ValueTask<Frame?> ReadAsync(CancellationToken cancellationToken)
    {
        var frame = await FrameCodec.ReadAsync(stream, Format, MaxFrameBytes, cancellationToken).ConfigureAwait(false);
        BytesRead += Format.HeaderSize + (frame?.Length ?? 0);
        return frame;
    }

    public override async ValueTask WriteAsync(ReadOnlyMemory<byte> frame, CancellationToken cancellationToken)
    {
        await stream.WriteAsync(frame, cancellationToken).ConfigureAwait(false);
        BytesWritten += frame.Length;
    }

    public override ValueTask DisposeAsync() => ValueTask.CompletedTask;
}

internal sealed class PipeFrameConnection : FrameConnection
{
    private readonly PipeReader _reader;
    private readonly PipeWriter _writer;

    public PipeFrameConnection(Stream stream, FrameFormat format, int maxFrameBytes) : base(format, maxFrameBytes)
    {
        _reader = PipeReader.Create(stream, new StreamPipeReaderOptions(bufferSize: 64 * 1024, minimumReadSize: 16 * 1024, leaveOpen: true));
        _writer = PipeWriter.Create(stream, new StreamPipeWriterOptions(minimumBufferSize: 64 * 1024, leaveOpen: true));
    }

    public override async ValueTask<Frame?> ReadAsync(CancellationToken cancellationToken)
    {
        while (true)
        {
            var result = await _reader.ReadAsync(cancellationToken).ConfigureAwait(false);
            var buffer = result.Buffer;
            if (TryTakeFrame(ref buffer, out var frame, out var isEnd))
            {
                _reader.AdvanceTo(buffer.Start);
                return isEnd ? null : frame;
            }
            if (result.IsCompleted)
            {
                var length = buffer.Length;
                _reader.AdvanceTo(buffer.End);
                throw length == 0 ? FrameCodec.ClosedBeforeEndMarker()
                    : length < Format.HeaderSize ? FrameCodec.TruncatedHeader(length, Format.HeaderSize)
                    : FrameCodec.TruncatedPayload(length - Format.HeaderSize, -1);
            }
            // Not a whole frame yet: keep it all, wait for more.
            _reader.AdvanceTo(buffer.Start, buffer.End);
        }
    }

    /// <summary>Takes one whole frame off the front of the buffer; the header is checked as soon as it is there.</summary>
    private bool TryTakeFrame(ref ReadOnlySequence<byte> buffer, out Frame? frame, out bool isEnd)
    {
        frame = null;
        isEnd = false;
        if (buffer.Length < Format.HeaderSize)
            return false;
        Span<byte> header = stackalloc byte[Format.HeaderSize];
        buffer.Slice(0, Format.HeaderSize).CopyTo(header);
        var (length, batchId) = Format.ParseHeader(header, MaxFrameBytes);
        if (buffer.Length < Format.HeaderSize + length)
            return false;
        if (length == 0)
            isEnd = true;
        else
        {
            frame = Frame.Rent(length, batchId);
            buffer.Slice(Format.HeaderSize, length).CopyTo(frame.Array);
        }
        BytesRead += Format.HeaderSize + length;
        buffer = buffer.Slice(Format.HeaderSize + length);
        return true;
    }

    public override async ValueTask WriteAsync(ReadOnlyMemory<byte> frame, CancellationToken cancellationToken)
    {
        var result = await _writer.WriteAsync(frame, cancellationToken).ConfigureAwait(false);
        if (result.IsCompleted)
            throw new IOException("The peer stopped reading.", new System.Net.Sockets.SocketException((int)System.Net.Sockets.SocketError.ConnectionReset));
        BytesWritten += frame.Length;
    }

    public override async ValueTask DisposeAsync()
    {
        await _reader.CompleteAsync().ConfigureAwait(false);
        await _writer.CompleteAsync().ConfigureAwait(false);
    }
}
