using System.Net;
using IntegrationTasks.Common;
using IntegrationTasks.Network;

namespace IntegrationTasks.Tests;

/// <summary>A relay that resets the first connection after some bytes, in front of a test's server.</summary>
internal static class RelayFaults
{
    public static async Task<(DelayRelay Relay, int Port, Task Running)> ResettingAsync(int serverPort, long afterBytes)
    {
        var relay = new DelayRelay(new RelayOptions
        {
            Listen = new IPEndPoint(IPAddress.Loopback, 0), TargetHost = "127.0.0.1", TargetPort = serverPort,
            Fault = RelayFaultKind.Reset, FaultAfterBytes = afterBytes,
        }, NullEventLog.Instance);
        var port = ((IPEndPoint)relay.Start()).Port;
        await Task.Yield();
        return (relay, port, relay.RunAsync(CancellationToken.None));
    }

    /// <summary>The same in front of a server on a Unix socket: the relay listens on <paramref name="relayPath"/>.</summary>
    public static async Task<(DelayRelay Relay, Task Running)> ResettingUnixAsync(string serverPath, string relayPath, long afterBytes)
    {
        var relay = new DelayRelay(new RelayOptions
        {
            Listen = new System.Net.Sockets.UnixDomainSocketEndPoint(relayPath), TargetPath = serverPath,
            Fault = RelayFaultKind.Reset, FaultAfterBytes = afterBytes,
        }, NullEventLog.Instance);
        relay.Start();
        await Task.Yield();
        return (relay, relay.RunAsync(CancellationToken.None));
    }
}
