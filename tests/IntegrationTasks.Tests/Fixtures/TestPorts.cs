using System.Net;
using System.Net.Sockets;

namespace IntegrationTasks.Tests;

/// <summary>Ports for servers a test starts as processes (which take their port as a property).</summary>
internal static class TestPorts
{
    /// <summary>
    /// A port free now. It is bound later by another process, so another program could take it in between: the servers then fail
    /// with IT4001 naming the port (a clear failure, never a hang). Servers started in the test process bind port 0 instead.
    /// </summary>
    public static int Free()
    {
        using var listener = new TcpListener(IPAddress.Loopback, 0);
        listener.Start();
        return ((IPEndPoint)listener.LocalEndpoint).Port;
    }
}
