using System.Net;
using System.Net.Sockets;
using IntegrationTasks.Common;

namespace IntegrationTasks.Tcp;

/// <summary>Binding and connecting with the suite's error codes.</summary>
public static class TcpEndpoints
{
    public static TcpListener Listen(string bindAddress, int port)
    {
        if (!IPAddress.TryParse(bindAddress, out var address))
            throw new IntegrationException(ErrorCodes.InvalidParameter, $"BindAddress '{bindAddress}' is not an IP address.");
        if (port is < 0 or > 65535)
            throw new IntegrationException(ErrorCodes.InvalidParameter, $"Port {port} is outside 0..65535.");
        var listener = new TcpListener(address, port);
        try
        {
            listener.Start(backlog: 512);
            return listener;
        }
        catch (SocketException e) when (e.SocketErrorCode == SocketError.AddressAlreadyInUse)
        {
            listener.Dispose();
            throw new IntegrationException(ErrorCodes.PortInUse,
                $"Port {port} on {bindAddress} is already in use (a server left running? see `ss -ltnp 'sport = :{port}'`). " +
                "Stop it or choose another port with -p:Port=…");
        }
        catch (SocketException e)
        {
            listener.Dispose();
            throw new IntegrationException(ErrorCodes.ConnectionFailed, $"Cannot listen on {bindAddress}:{port}: {e.Message}", e);
        }
    }

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
