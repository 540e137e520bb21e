using System.IO.Pipelines;

namespace IntegrationTasks.Tests;

/// <summary>Two ends of a connection in memory (two pipes), for the stream models' tests: no socket, no port, no timing.</summary>
internal sealed class InMemoryConnection
{
    private readonly Pipe _toServer = new();
    private readonly Pipe _toClient = new();

    public Stream Client => new DuplexStream(_toClient.Reader.AsStream(), _toServer.Writer.AsStream());
    public Stream Server => new DuplexStream(_toServer.Reader.AsStream(), _toClient.Writer.AsStream());

    /// <summary>The server's side closes (the client then reads the end of its input).</summary>
    public void CloseServerSide() => _toClient.Writer.Complete();

    private sealed class DuplexStream(Stream input, Stream output) : Stream
    {
        public override bool CanRead => true;
        public override bool CanSeek => false;
        public override bool CanWrite => true;
        public override long Length => throw new NotSupportedException();
        public override long Position { get => throw new NotSupportedException(); set => throw new NotSupportedException(); }
        public override int Read(byte[] buffer, int offset, int count) => input.Read(buffer, offset, count);
        public override ValueTask<int> ReadAsync(Memory<byte> buffer, CancellationToken cancellationToken = default) => input.ReadAsync(buffer, cancellationToken);
        public override Task<int> ReadAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken) =>
            input.ReadAsync(buffer, offset, count, cancellationToken);
        public override void Write(byte[] buffer, int offset, int count) => output.Write(buffer, offset, count);
        public override ValueTask WriteAsync(ReadOnlyMemory<byte> buffer, CancellationToken cancellationToken = default) => output.WriteAsync(buffer, cancellationToken);
        public override Task WriteAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken) =>
            output.WriteAsync(buffer, offset, count, cancellationToken);
        public override void Flush() => output.Flush();
        public override Task FlushAsync(CancellationToken cancellationToken) => output.FlushAsync(cancellationToken);
        public override long Seek(long offset, SeekOrigin origin) => throw new NotSupportedException();
        public override void SetLength(long value) => throw new NotSupportedException();
    }
}
