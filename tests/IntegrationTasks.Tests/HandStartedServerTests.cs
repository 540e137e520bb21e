namespace IntegrationTasks.Tests;

/// <summary>A server as a person starts it (<c>dotnet msbuild build.proj -t:TcpServer2</c>) and stops it (Ctrl+C).</summary>
[TestClass]
[TestCategory("EndToEnd")]
public sealed class HandStartedServerTests
{
    [TestMethod]
    [Timeout(300_000, CooperativeCancellation = true)]
    public async Task A_server_started_by_hand_says_where_it_listens_shows_each_client_and_ends_with_0_on_Ctrl_C()
    {
        using var artifacts = new TempDirectory("it-by-hand-");
        var (exitCode, output) = HostingTests.RunBuild("GenerateData", artifacts, "-p:Records=500");
        Assert.AreEqual(0, exitCode, output);
        var port = TestPorts.Free();
        using var server = HandStartedServer.Start("TcpServer2", artifacts, port);
        var screen = server.Screen;
        StringAssert.Contains(await screen.WaitForAsync("Ctrl+C stops it.", TimeSpan.FromSeconds(60)), $"TcpServer2 is serving tcp://127.0.0.1:{port}");
        (exitCode, output) = HostingTests.RunBuild("TcpClient2", artifacts, $"-p:Port={port}", "-p:Records=500", "-p:BatchSize=100");
        Assert.AreEqual(0, exitCode, output);
        StringAssert.Contains(await screen.WaitForAsync("finished: 5 requests answered", TimeSpan.FromSeconds(30)), "Connection from 127.0.0.1:");

        // Four of the largest requests it accepts (100,000 IDs each: ≈ 14 MB of reply apiece) in flight, then Ctrl+C: it stops anyway.
        using var heavy = new System.Net.Sockets.TcpClient();
        await heavy.ConnectAsync(System.Net.IPAddress.Loopback, port);
        var body = System.Text.Encoding.ASCII.GetBytes("<request>" + string.Concat(Enumerable.Repeat("<id>1</id>", 100_000)) + "</request>");
        var frame = new byte[8 + body.Length];
        System.Buffers.Binary.BinaryPrimitives.WriteInt64LittleEndian(frame, body.Length);
        body.CopyTo(frame, 8);
        for (var i = 0; i < 4; i++)
            await heavy.GetStream().WriteAsync(frame);

        await server.InterruptAsync();
        await server.Process.WaitForExitAsync().WaitAsync(TimeSpan.FromSeconds(60));
        Assert.AreEqual(0, server.Process.ExitCode, screen.ToString());
        StringAssert.Contains(screen.ToString(), "TcpServer2 stopped (Ctrl+C); exit code 0.");
        HostingTests.AssertPortFree(port);
    }

    [TestMethod]
    [Timeout(300_000, CooperativeCancellation = true)]
    public async Task A_RunAll_sent_SIGTERM_stops_its_servers_says_so_and_fails()
    {
        using var artifacts = new TempDirectory("it-runall-term-");
        var port = TestPorts.Free();
        using var build = HandStartedServer.Start("RunAll", artifacts, port, "-p:Transports=TcpClient2", "-p:Peers=false",
            "-p:RecordCounts=50000", "-p:Repetitions=20", "-p:Warmup=false");
        await build.Screen.WaitForAsync("repetition 1 of 20", TimeSpan.FromSeconds(180));
        // Sent while a client's own process runs: it must not outlive the build (AssertEndedCleanly finds it by its run file).
        await Eventually.WaitUntilAsync(() => ClientProcesses.Of(artifacts).Count > 0, "a client process of the build", TimeSpan.FromSeconds(60));
        using (var term = System.Diagnostics.Process.Start("kill", ["-TERM", build.Process.Id.ToString(System.Globalization.CultureInfo.InvariantCulture)]))
            await term.WaitForExitAsync();
        await build.Process.WaitForExitAsync().WaitAsync(TimeSpan.FromSeconds(90));
        Assert.AreEqual(IntegrationTasks.Common.BuildTermination.ExitCode, build.Process.ExitCode, build.Screen.ToString());
        Assert.IsTrue(build.Screen.Lines.Any(l => l.StartsWith($"{IntegrationTasks.Common.ErrorCodes.BuildTerminated}: ", StringComparison.Ordinal)), build.Screen.ToString());
        HostingTests.AssertPortFree(port);
        HostingTests.AssertEndedCleanly(artifacts);
        // The history keeps what was recorded before the build was stopped: readable, the RunAll not finished.
        var history = ResultsHistory.Open("Sqlite", $"Data Source={Path.Combine(artifacts, "results.db")}");
        var stopped = (await history.ListAsync(CancellationToken.None)).Single();
        Assert.AreEqual(HistoryEntry.Running, stopped.Status);
        var runs = (await history.LoadAsync(stopped.Id, CancellationToken.None)).Measurements;
        Assert.IsNotEmpty(runs);
        Assert.IsTrue(runs.All(r => r.Transport == "TcpClient2" && r.Verified && r.Records == 50_000), string.Join("\n", runs));
    }
}
