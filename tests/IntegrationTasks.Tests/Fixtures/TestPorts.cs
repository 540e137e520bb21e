namespace IntegrationTasks.Tests;

/// <summary>Ports for servers a test starts as processes (which take their port as a property).</summary>
internal static class TestPorts
{
    // Above RabbitMQ's distribution port (25672: AMQP's 5672 + 20000), which a broker the tests start may want.
    private const int Lowest = 26_000;

    /// <summary>Below the kernel's ephemeral range: the ports the kernel hands out on its own (to every outgoing connection, and
    /// to every listener on port 0) start there.</summary>
    private static readonly int EphemeralStart = ReadEphemeralStart();

    // Each test process starts in its own stretch, so that two running at once do not offer each other the same port.
    private static int _next = Lowest + Environment.ProcessId % 60 * 100;

    /// <summary>
    /// A port free now, and one the kernel will not give anything else before the test's server binds it. A port from the ephemeral
    /// range (what binding port 0 returns) could be taken in between by any outgoing connection — and the tests make many — so a
    /// server then failed with IT4001 by luck. Each call gives a port not given before in this process.
    /// </summary>
    public static int Free()
    {
        for (var attempt = 0; attempt < 1000; attempt++)
        {
            var port = Interlocked.Increment(ref _next);
            if (port >= EphemeralStart)
            {
                Interlocked.CompareExchange(ref _next, Lowest, port);
                continue;
            }
            try
            {
                using var listener = new TcpListener(IPAddress.Loopback, port);
                listener.Start();
                return port;
            }
            catch (SocketException)
            {
                // in use by something else: the next one
            }
        }
        throw new InvalidOperationException($"No free port between {Lowest} and {EphemeralStart}.");
    }

    private static int ReadEphemeralStart()
    {
        try
        {
            var range = File.ReadAllText("/proc/sys/net/ipv4/ip_local_port_range").Split((char[])['\t', ' ', '\n'], StringSplitOptions.RemoveEmptyEntries);
            return Math.Max(Lowest + 1_000, int.Parse(range[0], System.Globalization.CultureInfo.InvariantCulture));
        }
        catch (Exception e) when (e is IOException or FormatException or IndexOutOfRangeException)
        {
            return 32_768; // Linux's default
        }
    }
}
