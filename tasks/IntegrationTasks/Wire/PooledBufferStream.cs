
namespace IntegrationTasks.Wire;

/// <summary>
/// A write-only growable stream over pooled arrays (plain ones above a megabyte): messages are built here and sent as one frame
/// without a fresh large-object allocation per batch. Dispose returns the array to the pool.
/// </summary>
public sealed class PooledBufferStream : Stream
{
    private byte[] _buffer;
    private int _length;

    public PooledBufferStream(int initialCapacity = 64 * 1024) => _buffer = Buffers.Rent(initialCapacity);

    public ReadOnlyMemory<byte> WrittenMemory => _buffer.AsMemory(0, _length);

    internal Span<byte> WrittenSpan => _buffer.AsSpan(0, _length);

    /// <summary>Reads back what was written (valid until the next write or dispose).</summary>
    public Stream OpenRead() => new MemoryStream(_buffer, 0, _length, writable: false, publiclyVisible: true);

    public override bool CanRead => false;
    public override bool CanSeek => false;
    public override bool CanWrite => true;
    public override long Length => _length;
    public override long Position { get => _length; set => throw new NotSupportedException(); }

    public void Reset() => _length = 0;

    public override void Write(byte[] buffer, int offset, int count) => Write(buffer.AsSpan(offset, count));

    public override void Write(ReadOnlySpan<byte> source)
    {
        EnsureCapacity(_length + source.Length);
        source.CopyTo(_buffer.AsSpan(_length));
        _length += source.Length;
    }

    public override void WriteByte(byte value)
    {
        EnsureCapacity(_length + 1);
        _buffer[_length++] = value;
    }

    private void EnsureCapacity(int needed)
    {
        if (needed <= _buffer.Length)
            return;
        var larger = Buffers.Rent((int)Math.Min(Array.MaxLength, Math.Max(needed, _buffer.Length * 2L)));
        _buffer.AsSpan(0, _length).CopyTo(larger);
        Buffers.Return(_buffer);
        _buffer = larger;
    }

    public override void Flush() { }
    public override int Read(byte[] buffer, int offset, int count) => throw new NotSupportedException();
    public override long Seek(long offset, SeekOrigin origin) => throw new NotSupportedException();
    public override void SetLength(long value) => throw new NotSupportedException();

    protected override void Dispose(bool disposing)
    {
        if (disposing && _buffer.Length > 0)
        {
            Buffers.Return(_buffer);
            _buffer = [];
            _length = 0;
        }
        base.Dispose(disposing);
    }
}
