using System.Buffers;
using System.IO.Pipelines;
using IntegrationTasks.Wire;

namespace IntegrationTasks.Streams;

/// <summary>How a TCP generation does its socket I/O; the threading models above it are the same.</summary>
public enum StreamIo
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

    public static FrameConnection Create(StreamIo io, Stream stream, FrameFormat format, int maxFrameBytes) => io switch
    {
        StreamIo.Pipelines => new PipeFrameConnection(stream, format, maxFrameBytes),
        _ => new StreamFrameConnection(stream, format, maxFrameBytes),
    };

    /// <summary>The next frame, or null for the end marker.</summary>
    public abstract ValueTask<Frame?> ReadAsync(CancellationToken cancellationToken);

    /// <summary>
    /// The next frame's payload parsed as it arrives, never held whole (a frame may be up to MaxFrameBytes: a server's requests, whose
    /// IDs are a small part of it; a pipelined client's responses); null for the end marker. Whatever the parser leaves of the frame is
    /// read past.
    /// </summary>
    public async ValueTask<(int BatchId, T Value)?> ParseAsync<T>(Func<Stream, CancellationToken, Task<T>> parse, CancellationToken cancellationToken)
    {
        var (length, batchId) = await ReadHeaderAsync(cancellationToken).ConfigureAwait(false);
        BytesRead += Format.HeaderSize;
        if (length == 0)
            return null;
        var payload = new FramePayloadStream(PayloadSource, length, cancellationToken);
        try
        {
            T value;
            try
            {
                value = await parse(payload, cancellationToken).ConfigureAwait(false);
            }
            catch (IntegrationException) when (!payload.SourceFailed)
            {
                // A frame cut short is that, not the malformed message its first bytes may look like: the rest is read first. An error
                // the connection itself raised (a WebSocket's coded close, a reset) is told as it is.
                await payload.SkipRestAsync(cancellationToken).ConfigureAwait(false);
                throw;
            }
            await payload.SkipRestAsync(cancellationToken).ConfigureAwait(false);
            return (batchId, value);
        }
        finally
        {
            BytesRead += payload.Position;
        }
    }

    /// <summary>The next header, checked: the payload's length (0 for the end marker) and its batch id.</summary>
    protected abstract ValueTask<(int Length, int BatchId)> ReadHeaderAsync(CancellationToken cancellationToken);

    /// <summary>The connection's bytes after a header, read through by <see cref="ParseAsync{T}"/>.</summary>
    protected abstract Stream PayloadSource { get; }

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

    protected override ValueTask<(int Length, int BatchId)> ReadHeaderAsync(CancellationToken cancellationToken) =>
        FrameCodec.ReadHeaderAsync(stream, Format, MaxFrameBytes, cancellationToken);

    protected override Stream PayloadSource => stream;

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
    private Stream? _payload;

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

    protected override async ValueTask<(int Length, int BatchId)> ReadHeaderAsync(CancellationToken cancellationToken)
    {
        while (true)
        {
            var result = await _reader.ReadAsync(cancellationToken).ConfigureAwait(false);
            var buffer = result.Buffer;
            if (buffer.Length >= Format.HeaderSize)
            {
                Span<byte> header = stackalloc byte[Format.HeaderSize];
                buffer.Slice(0, Format.HeaderSize).CopyTo(header);
                var parsed = Format.ParseHeader(header, MaxFrameBytes);
                _reader.AdvanceTo(buffer.GetPosition(Format.HeaderSize));
                return parsed;
            }
            if (result.IsCompleted)
            {
                var length = buffer.Length;
                _reader.AdvanceTo(buffer.End);
                throw length == 0 ? FrameCodec.ClosedBeforeEndMarker() : FrameCodec.TruncatedHeader(length, Format.HeaderSize);
            }
            _reader.AdvanceTo(buffer.Start, buffer.End);
        }
    }

    protected override Stream PayloadSource => _payload ??= _reader.AsStream(leaveOpen: true);

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
