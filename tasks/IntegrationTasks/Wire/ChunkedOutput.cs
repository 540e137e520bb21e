namespace IntegrationTasks.Wire;

/// <summary>
/// Lets a synchronous XmlWriter feed an asynchronous stream (an HTTP body) in bounded memory: the
/// writer writes into a pooled buffer, and the buffer is sent whenever it passes a threshold — or
/// after every record when each one must be flushed to the wire (the series' Flush option).
/// </summary>
public sealed class ChunkedOutput(Stream target, int chunkBytes = 64 * 1024) : IDisposable
{
    private readonly PooledBufferStream _buffer = new(chunkBytes + 4096);

    /// <summary>Where the XmlWriter writes.</summary>
    public Stream Buffer => _buffer;

    public long BytesSent { get; private set; }

    /// <summary>Sends what is buffered if it is large enough, or always when <paramref name="force"/>; flushes the target then.</summary>
    public async ValueTask SendAsync(bool force, CancellationToken cancellationToken)
    {
        if (_buffer.Length == 0 || (!force && _buffer.Length < chunkBytes))
            return;
        await target.WriteAsync(_buffer.WrittenMemory, cancellationToken).ConfigureAwait(false);
        BytesSent += _buffer.Length;
        _buffer.Reset();
        if (force)
            await target.FlushAsync(cancellationToken).ConfigureAwait(false);
    }

    public void Dispose() => _buffer.Dispose();
}
