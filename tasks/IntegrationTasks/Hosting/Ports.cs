using System.Net;
using System.Net.Sockets;

namespace IntegrationTasks.Hosting;

/// <summary>Listening on a port with the suite's error codes; a probe before starting a server makes a taken port fail at once, clearly.</summary>
public static class Ports
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

    /// <summary>A port free on the loopback now (the system's choice), for a server that cannot have its configured one.</summary>
    public static int Free()
    {
        using var listener = Listen("127.0.0.1", 0);
        return ((IPEndPoint)listener.LocalEndpoint).Port;
    }

    /// <summary>Fails with IT4001 when the port is taken; binds nothing afterwards.</summary>
    public static void EnsureFree(string bindAddress, int port) => Listen(bindAddress, port).Stop();
}
