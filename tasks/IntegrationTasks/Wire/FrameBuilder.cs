namespace IntegrationTasks.Wire;

/// <summary>
/// A frame built in 64 KB pooled segments, header first: a reply of any size costs what it holds and no more (no doubling copies,
/// no large array the pool keeps), and one that grows past the payload limit is refused (IT2101) the moment it does, not once built.
/// </summary>
public sealed class FrameBuilder : Stream
{
    public const int SegmentBytes = 64 * 1024;

    private readonly List<byte[]> _segments = [];
    private readonly FrameFormat _format;
    private readonly long _maxPayloadBytes;
    private readonly string _what;
    private int _lastUsed;
    private long _length;

    /// <param name="what">What the frame is, for the refusal: "The response to batch 7".</param>
    public FrameBuilder(FrameFormat format, long maxPayloadBytes, string what)
    {
        _format = format;
        _maxPayloadBytes = maxPayloadBytes;
        _what = what;
        Span<byte> header = stackalloc byte[format.HeaderSize];
        header.Clear();
        Write(header);
    }

    public long PayloadLength => _length - _format.HeaderSize;

    /// <summary>The frame's bytes in order, header included (after <see cref="Complete"/>).</summary>
    public IEnumerable<ReadOnlyMemory<byte>> Segments
    {
        get
        {
            for (var i = 0; i < _segments.Count; i++)
                yield return _segments[i].AsMemory(0, i == _segments.Count - 1 ? _lastUsed : SegmentBytes);
        }
    }

    /// <summary>Fills in the reserved header; a frame needs a payload (an empty one would read as the end marker).</summary>
    public void Complete(int batchId)
    {
        if (PayloadLength <= 0)
            throw new InvalidOperationException("A frame needs a payload; an empty one would read as the end-of-transfer marker.");
        _format.WriteHeader(_segments[0], (int)PayloadLength, batchId);
    }

    public override void Write(ReadOnlySpan<byte> source)
    {
        if (_length + source.Length - _format.HeaderSize > _maxPayloadBytes)
            throw new IntegrationException(ErrorCodes.FrameTooLarge,
                $"{_what} would be over MaxFrameBytes ({_maxPayloadBytes:N0} bytes), the most the client accepts; not sent.");
        while (!source.IsEmpty)
        {
            if (_segments.Count == 0 || _lastUsed == SegmentBytes)
            {
                _segments.Add(Buffers.Rent(SegmentBytes));
                _lastUsed = 0;
            }
            var take = Math.Min(source.Length, SegmentBytes - _lastUsed);
            source[..take].CopyTo(_segments[^1].AsSpan(_lastUsed));
            _lastUsed += take;
            _length += take;
            source = source[take..];
        }
    }

    public override void Write(byte[] buffer, int offset, int count) => Write(buffer.AsSpan(offset, count));
    public override void WriteByte(byte value) => Write([value]);

    public override bool CanRead => false;
    public override bool CanSeek => false;
    public override bool CanWrite => true;
    public override long Length => _length;
    public override long Position { get => _length; set => throw new NotSupportedException(); }
    public override void Flush() { }
    public override int Read(byte[] buffer, int offset, int count) => throw new NotSupportedException();
    public override long Seek(long offset, SeekOrigin origin) => throw new NotSupportedException();
    public override void SetLength(long value) => throw new NotSupportedException();

    protected override void Dispose(bool disposing)
    {
        if (disposing)
        {
            foreach (var segment in _segments)
                Buffers.Return(segment);
            _segments.Clear();
        }
        base.Dispose(disposing);
    }
}
