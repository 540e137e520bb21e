namespace IntegrationTasks.Wire;

/// <summary>
/// One frame's payload read straight off the connection: it ends where the frame ends, and the connection closing first is a
/// truncated frame (IT2102). A server parses a request through it, so a request costs the parser's buffers, not its size.
/// Every read takes <paramref name="readToken"/> (the read deadline): a parser such as XmlReader passes none of its own.
/// </summary>
internal sealed class FramePayloadStream(Stream connection, int length, CancellationToken readToken) : Stream
{
    private int _remaining = length;

    public int Length32 { get; } = length;

    /// <summary>The connection failed or ended under a read: an error then is the connection's, not the parser's verdict on the bytes.</summary>
    public bool SourceFailed { get; private set; }

    public override async ValueTask<int> ReadAsync(Memory<byte> buffer, CancellationToken cancellationToken = default)
    {
        if (_remaining == 0 || buffer.IsEmpty)
            return 0;
        int read;
        try
        {
            read = await connection.ReadAsync(buffer[..Math.Min(buffer.Length, _remaining)],
                cancellationToken.CanBeCanceled ? cancellationToken : readToken).ConfigureAwait(false);
        }
        catch
        {
            SourceFailed = true;
            throw;
        }
        return Taken(read);
    }

    public override int Read(byte[] buffer, int offset, int count)
    {
        if (_remaining == 0 || count == 0)
            return 0;
        return ReadAsync(buffer.AsMemory(offset, count), readToken).AsTask().GetAwaiter().GetResult();
    }

    public override Task<int> ReadAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken) =>
        ReadAsync(buffer.AsMemory(offset, count), cancellationToken).AsTask();

    /// <summary>Reads what the parser left of the frame (it stops at its root's end), so the next frame starts where it should.</summary>
    public ValueTask SkipRestAsync(CancellationToken cancellationToken) =>
        _remaining == 0 ? ValueTask.CompletedTask : SkipAsync(cancellationToken); // the usual case: every request, nothing left

    private async ValueTask SkipAsync(CancellationToken cancellationToken)
    {
        var scrap = new byte[Math.Min(_remaining, 16 * 1024)];
        while (_remaining > 0)
            await ReadAsync(scrap, cancellationToken).ConfigureAwait(false);
    }

    private int Taken(int read)
    {
        if (read == 0)
        {
            SourceFailed = true;
            throw FrameCodec.TruncatedPayload(Length32 - _remaining, Length32);
        }
        _remaining -= read;
        return read;
    }

    public override bool CanRead => true;
    public override bool CanSeek => false;
    public override bool CanWrite => false;
    public override long Length => Length32;
    public override long Position { get => Length32 - _remaining; set => throw new NotSupportedException(); }
    public override void Flush() { }
    public override long Seek(long offset, SeekOrigin origin) => throw new NotSupportedException();
    public override void SetLength(long value) => throw new NotSupportedException();
    public override void Write(byte[] buffer, int offset, int count) => throw new NotSupportedException();
}
