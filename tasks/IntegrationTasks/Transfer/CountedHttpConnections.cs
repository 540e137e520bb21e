using System.Collections.Concurrent;
using System.Net;
using System.Net.Sockets;
using IntegrationTasks.Wire;

namespace IntegrationTasks.Transfer;

/// <summary>
/// An HTTP client's connections, each opened by us through a counting stream: the bytes on the wire both ways, HTTP and HTTP/2
/// framing included, and each new connection marked on the resume loop. (A ConnectCallback of our own means a gRPC channel has
/// no connectivity state of its own; a refused connection fails the first call at once.)
/// </summary>
public sealed class CountedHttpConnections(ResumingTransfer resumption)
{
    private readonly ConcurrentBag<CountingStream> _streams = [];

    public long BytesWritten => _streams.Sum(s => s.BytesWritten);
    public long BytesRead => _streams.Sum(s => s.BytesRead);

    /// <summary>A handler whose every connection is counted; the caller disposes it.</summary>
    public SocketsHttpHandler CreateHandler() => new()
    {
        ConnectCallback = async (context, token) =>
        {
            var socket = new Socket(SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
            try
            {
                await socket.ConnectAsync(context.DnsEndPoint, token).ConfigureAwait(false);
            }
            catch
            {
                socket.Dispose();
                throw;
            }
            var counting = new CountingStream(new NetworkStream(socket, ownsSocket: true));
            _streams.Add(counting);
            resumption.MarkConnected();
            return counting;
        },
        AutomaticDecompression = DecompressionMethods.None,
    };
}
