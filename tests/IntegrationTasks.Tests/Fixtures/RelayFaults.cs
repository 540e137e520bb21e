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

    /// <summary>
    /// The resume every resuming transport must show: its client, made for the relay's port, runs through a relay that resets the
    /// connection once after <paramref name="afterBytes"/>, reconnects (<paramref name="reconnects"/> times; at least once when null)
    /// and ends with every one of <paramref name="records"/> rows once, values equal.
    /// </summary>
    public static async Task AssertResumedAfterResetAsync(TestDatabases databases, int serverPort, Func<int, FakeBuildEngine, IntegrationTasks.Transfer.TransferClientTask> client,
        int records = 5000, long afterBytes = 300_000, int? reconnects = 1)
    {
        var (relay, relayPort, running) = await ResettingAsync(serverPort, afterBytes);
        await using (relay)
        {
            var engine = new FakeBuildEngine();
            var task = client(relayPort, engine);
            Assert.IsTrue(await Task.Run(task.Execute), engine.Log);
            Assert.IsTrue(relay.FaultInjected, "the relay reset the connection");
            if (reconnects is { } expected)
                Assert.AreEqual(expected, task.Reconnects, engine.Log);
            else
                Assert.IsGreaterThanOrEqualTo(1, task.Reconnects, engine.Log);
            var report = await new IntegrationTasks.Data.TransferVerifier(databases.Server, databases.Client).VerifyAsync(records, CancellationToken.None);
            Assert.IsTrue(report.Success, report.ToString());
        }
        await running;
    }
}
