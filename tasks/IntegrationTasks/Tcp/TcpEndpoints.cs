using System.Net.Sockets;
using IntegrationTasks.Common;

namespace IntegrationTasks.Tcp;

/// <summary>Connecting with the suite's error codes (listening: <see cref="Hosting.Ports"/>).</summary>
public static class TcpEndpoints
{
    public static async Task<TcpClient> ConnectAsync(string host, int port, string serverTarget, CancellationToken cancellationToken)
    {
        var client = new TcpClient { NoDelay = true };
        try
        {
            await client.ConnectAsync(host, port, cancellationToken).ConfigureAwait(false);
            return client;
        }
        catch (SocketException e)
        {
            client.Dispose();
            throw new IntegrationException(ErrorCodes.ConnectionFailed,
                $"Cannot connect to {host}:{port} ({e.SocketErrorCode}). Is the server running? " +
                $"Start it with: dotnet msbuild build.proj -t:{serverTarget}", e);
        }
    }

    /// <summary>Connection resets and aborts are how peers leave; they are not server faults.</summary>
    public static bool IsDisconnect(Exception e) =>
        e is IOException { InnerException: SocketException } or SocketException or ObjectDisposedException;
}
