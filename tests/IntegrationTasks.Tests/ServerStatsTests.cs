namespace IntegrationTasks.Tests;

/// <summary>
/// What a server writes for the orchestrator every 100 ms — and what that costs it while it waits: an interleaved RunAll keeps
/// every server running, and fourteen idle servers that each sampled their thread pool from a pool timer and read /proc's TCP
/// tables ten times a second took most of a small machine's CPU from the runs.
/// </summary>
[TestClass]
[TestCategory("EndToEnd")]
[DoNotParallelize]
public sealed class ServerStatsTests
{
    [TestMethod]
    [TestCategory("Unit")]
    public void A_waiting_server_rewrites_its_counters_only_when_they_say_something_new()
    {
        var last = new IntegrationTasks.Hosting.ServerStatsSnapshot(42, AllocatedBytes: 10_000_000, CompletedWorkItems: 500, MaxThreads: 4, MaxQueue: 2, MaxConnections: 1);
        Assert.IsTrue(IntegrationTasks.Hosting.ServerStatsWriter.HasNews(null, last), "the first snapshot");
        // What a waiting server does on its own: Kestrel's heartbeat, the sampling's few KB.
        Assert.IsFalse(IntegrationTasks.Hosting.ServerStatsWriter.HasNews(last, last with { AllocatedBytes = 10_003_000, CompletedWorkItems = 502 }));
        Assert.IsFalse(IntegrationTasks.Hosting.ServerStatsWriter.HasNews(last, last with { AllocatedBytes = 10_262_144, CompletedWorkItems = 508 }));
        // A run: work items, allocations, or any maximum that moved.
        Assert.IsTrue(IntegrationTasks.Hosting.ServerStatsWriter.HasNews(last, last with { CompletedWorkItems = 509 }));
        Assert.IsTrue(IntegrationTasks.Hosting.ServerStatsWriter.HasNews(last, last with { AllocatedBytes = 10_262_145 }));
        Assert.IsTrue(IntegrationTasks.Hosting.ServerStatsWriter.HasNews(last, last with { MaxThreads = 5 }));
        Assert.IsTrue(IntegrationTasks.Hosting.ServerStatsWriter.HasNews(last, last with { MaxQueue = 3 }));
        Assert.IsTrue(IntegrationTasks.Hosting.ServerStatsWriter.HasNews(last, last with { MaxConnections = 2 }));
        Assert.IsTrue(IntegrationTasks.Hosting.ServerStatsWriter.HasNews(last, last with { MaxRequestsWaiting = 1 }));
        Assert.IsTrue(IntegrationTasks.Hosting.ServerStatsWriter.HasNews(last, last with { ProcessId = 43 }), "a server started again");
    }

    [TestMethod]
    [Timeout(300_000, CooperativeCancellation = true)]
    public async Task An_idle_server_s_sampling_completes_no_work_of_its_own_and_a_client_is_still_counted()
    {
        using var artifacts = new TempDirectory("it-stats-");
        var (exitCode, output) = HostingTests.RunBuild("GenerateData", artifacts, "-p:Records=500");
        Assert.AreEqual(0, exitCode, output);
        var port = TestPorts.Free();
        var stats = Path.Combine(artifacts, "logs", "TcpServer2.stats.json");
        using var server = HandStartedServer.Start("TcpServer2", artifacts, port, $"-p:ServerStatsFile={stats}");
        await server.Screen.WaitForAsync("Ctrl+C stops it.", TimeSpan.FromSeconds(60));
        await Eventually.WaitUntilAsync(() => File.Exists(stats), "the server's first snapshot", TimeSpan.FromSeconds(10));
        await Task.Delay(1000);
        var first = IntegrationTasks.Hosting.ServerStatsWriter.Read(stats)!;
        // Two seconds of waiting (twenty samples): no work item is completed for the sampling (it has a thread of its own, not a
        // pool timer), so the connections are not counted again either.
        await Task.Delay(2000);
        var second = IntegrationTasks.Hosting.ServerStatsWriter.Read(stats)!;
        Assert.AreEqual(first.CompletedWorkItems, second.CompletedWorkItems, "the sampler's own ticks counted as the server's work");
        Assert.AreEqual(0, second.MaxConnections);

        // A client: the server works, so its connections are counted again (at most once a second).
        using var client = new System.Net.Sockets.TcpClient();
        await client.ConnectAsync(System.Net.IPAddress.Loopback, port);
        await Eventually.WaitUntilAsync(() => IntegrationTasks.Hosting.ServerStatsWriter.Read(stats)?.MaxConnections == 1, "the client's connection counted",
            TimeSpan.FromSeconds(10), () => File.ReadAllText(stats));
        await server.InterruptAsync();
        await server.Process.WaitForExitAsync().WaitAsync(TimeSpan.FromSeconds(60));
    }
}
