using IntegrationTasks.Network;

namespace IntegrationTasks.Tests;

/// <summary>Two simulated hosts and the network profiles: namespaces made and removed, RunAll across the link, latency through the relay.</summary>
[TestClass]
[TestCategory("EndToEnd")]
[DoNotParallelize]
public sealed class NetworkTests
{
    private static async Task<List<string>> OurNamespacesAsync() =>
        (await TwoHosts.ListAsync(CancellationToken.None)).Where(ns => ns.StartsWith("it-", StringComparison.Ordinal)).ToList();

    private static string Links() => RepositoryPaths.Run("ip", ["-o", "link", "show"]).Stdout;

    [TestMethod]
    public async Task Two_hosts_are_made_joined_and_removed_as_root()
    {
        await using (var hosts = await TwoHosts.CreateAsync(Environment.ProcessId, bandwidthMbit: 100, NullEventLog.Instance, CancellationToken.None))
        {
            CollectionAssert.IsSubsetOf(new[] { hosts.ServerNamespace, hosts.ClientNamespace }, await OurNamespacesAsync());
            // The client's namespace reaches the server's address over the link, and the link is shaped by tbf.
            var ping = RepositoryPaths.Run("ip", [.. TwoHosts.Exec(hosts.ClientNamespace).Skip(1), "ip", "route", "get", TwoHosts.ServerAddress]);
            StringAssert.Contains(ping.Stdout, hosts.ClientLink, ping.Stdout + ping.Stderr);
            var qdisc = RepositoryPaths.Run("tc", ["-n", hosts.ServerNamespace, "qdisc", "show", "dev", hosts.ServerLink]);
            StringAssert.Contains(qdisc.Stdout, "tbf", qdisc.Stdout + qdisc.Stderr);
            StringAssert.Contains(qdisc.Stdout, "100Mbit", qdisc.Stdout);
        }
        Assert.IsEmpty(await OurNamespacesAsync(), "no namespace left");
        Assert.DoesNotContain("itv", Links(), "no veth left");
    }

    [TestMethod]
    public async Task Namespaces_of_a_build_that_died_are_removed_before_new_ones_as_root()
    {
        // A pid that cannot be running: as if a build had been killed outright after making its namespaces.
        var dead = RepositoryPaths.Run("ip", ["netns", "add", "it-srv-999999"]);
        Assert.AreEqual(0, dead.ExitCode, dead.Stderr);
        var log = new CapturingLog();
        await using (await TwoHosts.CreateAsync(Environment.ProcessId, null, log, CancellationToken.None))
            Assert.DoesNotContain("it-srv-999999", await OurNamespacesAsync());
        Assert.IsTrue(log.Lines.Any(l => l.StartsWith($"warning {ErrorCodes.LeftoverRemoved}", StringComparison.Ordinal)), string.Join("\n", log.Lines));
        Assert.IsEmpty(await OurNamespacesAsync());
    }

    [TestMethod]
    public async Task Without_root_two_hosts_stop_with_a_coded_error()
    {
        var e = await Assert.ThrowsExactlyAsync<IntegrationException>(() =>
            TwoHosts.CreateAsync(Environment.ProcessId, null, NullEventLog.Instance, CancellationToken.None, privileged: false));
        Assert.AreEqual(ErrorCodes.NeedsRoot, e.Code);
        StringAssert.Contains(e.Message, "root");
    }

    [TestMethod]
    [TestCategory("Unit")]
    public void Profiles_parse_and_describe_themselves()
    {
        Assert.AreEqual("Wan (40 ms round trip, 100 Mbit/s)", NetworkProfile.Parse("Wan", null, null).Describe());
        Assert.AreEqual("Lan2014 (0.2 ms round trip, 1000 Mbit/s)", NetworkProfile.Parse("lan2014", "", "").Describe());
        Assert.AreEqual("Custom (5 ms round trip, 100 Mbit/s)", NetworkProfile.Parse("Wan", "5", null).Describe());
        Assert.AreEqual("Loopback (no latency added, not shaped)", NetworkProfile.Parse(null, null, null).Describe());
        foreach (var (name, latency, bandwidth) in new[] { ("Moon", "", ""), ("Wan", "-1", ""), ("Wan", "", "0"), ("Wan", "fast", "") })
            Assert.AreEqual(ErrorCodes.InvalidParameter, Assert.ThrowsExactly<IntegrationException>(() => NetworkProfile.Parse(name, latency, bandwidth)).Code);
    }

    [TestMethod]
    public void RunAll_on_two_hosts_moves_every_row_across_the_link_and_leaves_nothing_as_root()
    {
        using var artifacts = new TempDirectory("it-twohosts-");
        var (exitCode, output) = HostingTests.RunBuild("RunAll", artifacts, "-p:Hosts=Two", "-p:Network=Lan2014",
            "-p:Transports=TcpClient2+HttpRequest+GrpcClient+RestJson+WebSocketClient+RabbitMQDurable+FileTransferRequest", "-p:RecordCounts=2000", "-p:Repetitions=1",
            "-p:Warmup=false", "-p:BatchSize=500", "-p:Peers=false");
        Assert.AreEqual(0, exitCode, output);
        var runs = File.ReadAllLines(Path.Combine(artifacts, "results", "runs.jsonl"));
        Assert.HasCount(7, runs, output);
        Assert.IsTrue(runs.All(r => r.Contains("\"verified\":true")));
        // The servers listened on the server host's address, in its namespace, and the relay added the profile's latency.
        StringAssert.Contains(File.ReadAllText(Path.Combine(artifacts, "logs", "TcpServer2.log")), $"tcp://{TwoHosts.ServerAddress}:");
        foreach (var server in new[] { "RestServer", "WebSocketServer" })
            StringAssert.Contains(File.ReadAllText(Path.Combine(artifacts, "logs", $"{server}.log")), $"http://{TwoHosts.ServerAddress}:", server);
        Assert.IsTrue(runs.Where(r => r.Contains("\"transport\":\"RestJson\"") || r.Contains("\"transport\":\"WebSocketClient\""))
            .All(r => r.Contains("\"throughRelay\":true") && r.Contains("\"latencyMs\":0.2")), string.Join("\n", runs));
        var markdown = File.ReadAllText(Path.Combine(artifacts, "results", "results.md"));
        StringAssert.Contains(markdown, "network: Lan2014 (0.2 ms round trip, 1000 Mbit/s)");
        StringAssert.Contains(markdown, "1000 Mbit/s), two hosts");
        StringAssert.StartsWith(MarkdownTable.Bullet(markdown, "Note (file transfers)"), "FileTransferRequest and FileTransferBigRequest go through");
        // The queue transport's relay sits between its client and the broker on the server's host; only the files are not relayed.
        StringAssert.EndsWith(markdown.Split('\n').Single(l => l.Contains("Not through the delay relay", StringComparison.Ordinal)), ": FileTransferRequest.");
        Assert.Contains("\"transport\":\"RabbitMQDurable\"", runs.Single(r => r.Contains("\"throughRelay\":true") && r.Contains("RabbitMQDurable")));
        Assert.IsEmpty(OurNamespacesAsync().GetAwaiter().GetResult(), "no namespace left");
        Assert.DoesNotContain("itv", Links());
        HostingTests.AssertNoProcessMentions(artifacts);
    }

    [TestMethod]
    [Timeout(600_000, CooperativeCancellation = true)]
    public async Task Two_client_machines_against_one_server_machine_merge_into_one_run_of_all_their_clients()
    {
        using var artifacts = new TempDirectory("it-machines-");
        var serverConnString = $"Data Source={Path.Combine(artifacts, "server.db")}";
        await new IntegrationTasks.Data.DataGenerator(IntegrationTasks.Data.Database.Create("Sqlite", serverConnString), NullEventLog.Instance)
            .GenerateAsync(2400, CancellationToken.None);
        await using var hosts = await TwoHosts.CreateAsync(Environment.ProcessId, bandwidthMbit: null, NullEventLog.Instance, CancellationToken.None, clientHosts: 2);
        var port = TestPorts.Free();
        // The server's machine: a server started by hand, listening on its address.
        using var server = HandStartedServer.StartIn(TwoHosts.Exec(hosts.ServerNamespace), "TcpServer2", artifacts, port,
            $"-p:BindAddress={TwoHosts.ServerAddress}", $"-p:ServerConnString={serverConnString}");
        await server.Screen.WaitForAsync(IntegrationTasks.Hosting.ServerSignals.ReadyMarker, TimeSpan.FromSeconds(60));

        // Two client machines, each 2 clients over all 2,400 records into its own ClientTable, started to begin at the same moment.
        var startAt = DateTimeOffset.UtcNow.AddSeconds(20).ToString("yyyy-MM-ddTHH:mm:ssZ", System.Globalization.CultureInfo.InvariantCulture);
        var machines = new[] { "a", "b" }.Select((name, k) => Task.Run(() => RepositoryPaths.Run("ip",
        [
            .. TwoHosts.Exec(hosts.ClientNamespaces[k]).Skip(1), "dotnet", .. TestBuild.Arguments("ClientMachineRun", Path.Combine(artifacts, name)),
            "-p:Transport=TcpClient2", $"-p:HostName={TwoHosts.ServerAddress}", $"-p:Port={port}", "-p:Clients=2", "-p:Records=2400", "-p:BatchSize=200",
            $"-p:StartAt={startAt}", $"-p:ClientMachine={name}", $"-p:ServerConnString={serverConnString}",
            $"-p:ClientConnString=Data Source={Path.Combine(artifacts, name + "-client.db")}",
        ]))).ToList();
        var outcomes = await Task.WhenAll(machines);
        foreach (var (exitCode, stdout, stderr) in outcomes)
            Assert.AreEqual(0, exitCode, stdout + stderr);
        // The server saw both machines' addresses.
        await Eventually.WaitUntilAsync(() => server.Screen.Lines.Count(l => l.Contains(TwoHosts.ClientAddressOf(0), StringComparison.Ordinal)) >= 2
                                              && server.Screen.Lines.Count(l => l.Contains(TwoHosts.ClientAddressOf(1), StringComparison.Ordinal)) >= 2,
            "two connections from each client machine", seen: () => server.Screen.ToString());
        var a = MeasurementLog.Read(Path.Combine(artifacts, "a", "results", "runs.jsonl")).Single();
        var b = MeasurementLog.Read(Path.Combine(artifacts, "b", "results", "runs.jsonl")).Single();
        Assert.IsTrue(a is { Verified: true, ClientMachine: "a", Clients: 2 } && b is { Verified: true, ClientMachine: "b", Clients: 2 });
        Assert.AreEqual(a.StartAt, b.StartAt);

        // Any machine: one report of both, the two runs one run of four clients.
        var (reportExit, output) = HostingTests.RunBuild("Report", Path.Combine(artifacts, "merged"),
            $"-p:MergeRuns={Path.Combine(artifacts, "a", "results", "runs.jsonl")}+{Path.Combine(artifacts, "b", "results", "runs.jsonl")}",
            $"-p:ServerConnString={serverConnString}");
        Assert.AreEqual(0, reportExit, output);
        var merged = System.Text.Json.JsonDocument.Parse(File.ReadAllText(Path.Combine(artifacts, "merged", "results", "results.json")))
            .RootElement.GetProperty("measurements").EnumerateArray().Single();
        Assert.AreEqual(4, merged.GetProperty("clients").GetInt32());
        Assert.AreEqual(2, merged.GetProperty("clientMachines").GetInt32());
        Assert.AreEqual(4800, merged.GetProperty("records").GetInt32());
        Assert.AreEqual(Math.Max(a.ElapsedSeconds, b.ElapsedSeconds), merged.GetProperty("elapsedSeconds").GetDouble());
        Assert.AreEqual(24, merged.GetProperty("batchLatency").GetProperty("batches").GetInt64(), "every batch of both machines in one histogram");
        StringAssert.Contains(File.ReadAllText(Path.Combine(artifacts, "merged", "results", "results.md")), "| TcpClient2 (4 clients, 2 client machines) |");
        await server.InterruptAsync();
        await server.Process.WaitForExitAsync().WaitAsync(TimeSpan.FromSeconds(60));
    }

    [TestMethod]
    public void Load_on_two_hosts_runs_many_clients_across_the_link_with_a_network_profile()
    {
        using var artifacts = new TempDirectory("it-twohosts-load-");
        var (exitCode, output) = HostingTests.RunBuild("Load", artifacts, "-p:Hosts=Two", "-p:Network=Lan2014",
            "-p:LoadTransport=TcpClient2+GrpcClient+RabbitMQClientTest", "-p:ClientCounts=1+3", "-p:RecordsPerClient=600", "-p:BatchSize=200",
            "-p:Repetitions=1", "-p:Warmup=false");
        Assert.AreEqual(0, exitCode, output);
        var runs = MeasurementLog.Read(Path.Combine(artifacts, "results", "load", "runs.jsonl"));
        CollectionAssert.AreEquivalent(new[] { "TcpClient2/1", "TcpClient2/3", "GrpcClient/1", "GrpcClient/3", "RabbitMQClientTest/1", "RabbitMQClientTest/3" },
            runs.Select(r => $"{r.Transport}/{r.Clients}").ToList(), output);
        Assert.IsTrue(runs.All(r => r is { Verified: true, ThroughRelay: true, LatencyMs: 0.2 }), string.Join("\n", runs));
        StringAssert.Contains(File.ReadAllText(Path.Combine(artifacts, "logs", "TcpServer2.log")), $"tcp://{TwoHosts.ServerAddress}:");
        var markdown = File.ReadAllText(Path.Combine(artifacts, "results", "load", "results.md"));
        StringAssert.Contains(markdown, "network: Lan2014 (0.2 ms round trip, 1000 Mbit/s)");
        StringAssert.Contains(markdown, "1000 Mbit/s), two hosts");
        StringAssert.Contains(markdown, "## Many clients at once");
        Assert.IsEmpty(OurNamespacesAsync().GetAwaiter().GetResult(), "no namespace left");
        Assert.DoesNotContain("itv", Links());
    }

    [TestMethod]
    [Timeout(600_000, CooperativeCancellation = true)]
    public void RunAll_over_Unix_sockets_runs_the_TCP_generations_verified_and_the_relay_cuts_and_they_resume()
    {
        // The stream seam through the build: -p:Connector=Unix serves and connects over a Unix socket, and -p:Fault=Reset puts the
        // relay in front of it on a socket of its own.
        using var artifacts = new TempDirectory("it-unix-");
        var (exitCode, output) = HostingTests.RunBuild("RunAll", artifacts, "-p:Connector=Unix", $"-p:Port={TestPorts.Free()}", $"-p:RelayPort={TestPorts.Free()}",
            "-p:Fault=Reset", "-p:FaultAfterBytes=400000", "-p:Transports=TcpClient2+TcpClientMultiThreadTest3",
            "-p:RecordCounts=5000", "-p:Repetitions=1", "-p:Warmup=false", "-p:BatchSize=100", "-p:Peers=false");
        Assert.AreEqual(0, exitCode, output);
        StringAssert.Contains(output, $"unix://{artifacts}/sockets/records.sock");
        StringAssert.Contains(output, $"unix://{artifacts}/sockets/relay.sock");
        var runs = MeasurementLog.Read(Path.Combine(artifacts, "results", "runs.jsonl"));
        Assert.HasCount(2, runs);
        Assert.IsTrue(runs.All(r => r is { Verified: true, FaultInjected: true, ThroughRelay: true, RowsDuplicated: 0, Reconnects: >= 1 }), string.Join("\n", runs));
        Assert.IsFalse(Directory.EnumerateFiles(Path.Combine(artifacts, "sockets")).Any(), "no socket file is left behind");
    }

    [TestMethod]
    public void RunAll_with_a_reset_in_every_repetition_resumes_or_fails_cleanly_and_the_report_has_a_fault_table()
    {
        using var artifacts = new TempDirectory("it-fault-");
        var (exitCode, output) = HostingTests.RunBuild("RunAll", artifacts, $"-p:Port={TestPorts.Free()}", $"-p:RelayPort={TestPorts.Free()}",
            "-p:Fault=Reset", "-p:FaultAfterBytes=400000",
            "-p:Transports=TcpClientSingleThreadTest+TcpClient2+TcpClientMultiThreadTest4+HttpRequest+GrpcStreaming+SoapSmallBatchesAsync+WebSocketClient+FileTransferRequest",
            "-p:RecordCounts=5000", "-p:Repetitions=2", "-p:Warmup=false", "-p:BatchSize=100", "-p:Peers=false");
        // TCP 1 cannot resume: its clean failure is the outcome recorded, not a failed build.
        Assert.AreEqual(0, exitCode, output);
        var runs = MeasurementLog.Read(Path.Combine(artifacts, "results", "runs.jsonl"));
        Assert.HasCount(16, runs);
        var faulted = runs.Where(r => r.Transport != "FileTransferRequest").ToList();
        // First: the fault landed in every relayed run (counted on the server's bytes, so it cannot miss).
        Assert.IsTrue(faulted.All(r => r is { FaultInjected: true, FaultAfterBytes: 400_000 }), string.Join("\n", runs));
        Assert.IsTrue(faulted.All(r => r is { Verified: true, ThroughRelay: true, Fault: "Reset", RowsDuplicated: 0 }), string.Join("\n", runs));
        // Files are not relayed, so no fault reached them and none is recorded.
        Assert.IsTrue(runs.Where(r => r.Transport == "FileTransferRequest").All(r => r.Fault is null && r.Completed), string.Join("\n", runs));
        // One reset per repetition (a fresh relay each time): the resuming clients resumed once each, every row there once.
        foreach (var run in faulted.Where(r => r.Transport != "TcpClientSingleThreadTest"))
            Assert.IsTrue(run is { Completed: true, Reconnects: 1, RecoverySeconds: > 0 } && run.RowsMatched == 5000, run.ToString());
        // TCP 1 failed with its code, whole batches committed, none twice.
        foreach (var run in faulted.Where(r => r.Transport == "TcpClientSingleThreadTest"))
            Assert.IsTrue(run is { FailedWith: ErrorCodes.ConnectionLost, RecordsCommitted: > 0 and < 5000 } && run.RecordsCommitted % 100 == 0 && run.RowsMatched == run.RecordsCommitted,
                run.ToString());
        var markdown = File.ReadAllText(Path.Combine(artifacts, "results", "results.md"));
        StringAssert.Contains(markdown, "- Fault: Reset");
        StringAssert.Contains(markdown, "## Faults");
        var faults = MarkdownTable.With(markdown, "Outcome");
        var tcp1 = faults.Row("TcpClientSingleThreadTest");
        Assert.AreEqual(("Reset", "5,000", "2", "0", "0"), (tcp1["Fault"], tcp1["Records"], tcp1["Runs"], tcp1["Rows lost"], tcp1["Rows duplicated"]));
        StringAssert.StartsWith(tcp1["Outcome"], "failed cleanly (IT3006)");
        foreach (var transport in new[] { "TcpClient2", "TcpClientMultiThreadTest4", "HttpRequest", "GrpcStreaming", "SoapSmallBatchesAsync", "WebSocketClient" })
        {
            var row = faults.Row(transport);
            Assert.AreEqual(("Reset", "5,000", "2", "resumed", "0", "0"), (row["Fault"], row["Records"], row["Runs"], row["Outcome"], row["Rows lost"], row["Rows duplicated"]), transport);
            StringAssert.Matches(row["Time to recover (s)"], new System.Text.RegularExpressions.Regex(@"^\d"), transport);
        }
        // The failed runs are in no statistic: TCP 1 has no row in the ranking.
        Assert.IsFalse(MarkdownTable.With(markdown, "Against the one above").HasRow("TcpClientSingleThreadTest"));
        // An injected reset is announced once, not followed by the relay's noise about the connection it cut.
        Assert.DoesNotContain("ended: Operation canceled", output);
        StringAssert.Contains(File.ReadAllText(Path.Combine(artifacts, "results", "report.html")), "<table id=\"faults\">");
        HostingTests.AssertNoProcessMentions(artifacts);
    }

    [TestMethod]
    public void A_fault_that_never_landed_is_recorded_and_reported_as_not_injected()
    {
        // The walk-through's case: too little data for FaultAfterBytes; the fault table said "rode it out (no break)".
        using var artifacts = new TempDirectory("it-not-injected-");
        var (exitCode, output) = HostingTests.RunBuild("RunAll", artifacts, $"-p:Port={TestPorts.Free()}", $"-p:RelayPort={TestPorts.Free()}",
            "-p:Fault=Reset", "-p:FaultAfterBytes=100000000", "-p:Transports=TcpClient2", "-p:RecordCounts=2000", "-p:Repetitions=1",
            "-p:Warmup=false", "-p:Peers=false");
        Assert.AreEqual(0, exitCode, output);
        var run = MeasurementLog.Read(Path.Combine(artifacts, "results", "runs.jsonl")).Single();
        Assert.IsTrue(run is { Fault: "Reset", FaultInjected: false, FaultAfterBytes: 100_000_000, FaultBytesFromServer: > 0 and < 100_000_000 }, run.ToString());
        StringAssert.Contains(output, "warning IT4014: TcpClient2, repetition 1: the fault Reset");
        var markdown = File.ReadAllText(Path.Combine(artifacts, "results", "results.md"));
        var faults = MarkdownTable.With(markdown, "Outcome").Row("TcpClient2");
        Assert.AreEqual(("Reset", "2,000", "1"), (faults["Fault"], faults["Records"], faults["Runs"]));
        StringAssert.StartsWith(faults["Outcome"], "not injected in 1 of 1 (the server sent at most ");
        Assert.DoesNotContain("rode it out (no break) |", markdown);
    }

    [TestMethod]
    public void RunAll_with_the_server_killed_in_every_repetition_resumes_once_it_is_back_or_fails_cleanly()
    {
        using var artifacts = new TempDirectory("it-kill-");
        var (exitCode, output) = HostingTests.RunBuild("RunAll", artifacts, $"-p:Port={TestPorts.Free()}", $"-p:RelayPort={TestPorts.Free()}",
            "-p:Fault=KillServer", "-p:FaultAfterBytes=200000",
            "-p:Transports=TcpClientSingleThreadTest+TcpClient2+TcpClientMultiThreadTest3+TcpClientMultiThreadTest4+HttpRequest+GrpcClient+GrpcStreaming+SoapSmallBatchesAsync+NetTcpSmallBatchesAsync+RestJson+WebSocketClient",
            $"-p:GrpcPort={TestPorts.Free()}", $"-p:SoapPort={TestPorts.Free()}", $"-p:NetTcpPort={TestPorts.Free()}", $"-p:RestPort={TestPorts.Free()}",
            $"-p:WebSocketPort={TestPorts.Free()}", "-p:RecordCounts=5000", "-p:Repetitions=2", "-p:Warmup=false", "-p:BatchSize=100", "-p:Peers=false");
        Assert.AreEqual(0, exitCode, output);
        var runs = MeasurementLog.Read(Path.Combine(artifacts, "results", "runs.jsonl"));
        Assert.HasCount(22, runs);
        // First: the kill landed in every run (counted on the server's bytes, then the connection cut there: it cannot miss).
        Assert.IsTrue(runs.All(r => r is { FaultInjected: true, FaultAfterBytes: 200_000 }), string.Join("\n", runs));
        Assert.IsTrue(runs.All(r => r is { Fault: "KillServer", RowsDuplicated: 0 }), string.Join("\n", runs));
        foreach (var run in runs.Where(r => r.Transport != "TcpClientSingleThreadTest"))
            Assert.IsTrue(run is { Completed: true, Reconnects: >= 1, RecoverySeconds: > 0 } && run.RowsMatched == 5000, run.ToString());
        foreach (var run in runs.Where(r => r.Transport == "TcpClientSingleThreadTest"))
            Assert.IsTrue(run is { FailedWith: ErrorCodes.ConnectionLost } && run.RecordsCommitted % 100 == 0 && run.RowsMatched == run.RecordsCommitted, run.ToString());
        // Killed once per repetition by the relay, started again by the build each time (each server's log says so), stopped for good at the end.
        StringAssert.Contains(output, "warning IT4013: [DelayRelay] Relay: fault injected");
        // (200,000 bytes: early enough in gRPC's compact stream too.)
        foreach (var server in new[] { "TcpTestServer", "TcpServer2", "TcpTestServer3", "TcpTestServer4", "HttpServer", "SoapServer", "NetTcpServer", "RestServer", "WebSocketServer" })
        {
            var log = File.ReadAllLines(Path.Combine(artifacts, "logs", $"{server}.log"));
            Assert.AreEqual(2, log.Count(l => l.Contains($"warning IT4012: {server} exited (code ", StringComparison.Ordinal)), string.Join("\n", log));
            Assert.AreEqual(2, log.Count(l => l.Contains($"{server} is back (process", StringComparison.Ordinal)), string.Join("\n", log));
            StringAssert.Contains(output, $"{server} stopped (exit code 0, peak memory", server);
            StringAssert.Contains(output, "started again 2 times after its process exited", server);
        }
        var faults = MarkdownTable.With(File.ReadAllText(Path.Combine(artifacts, "results", "results.md")), "Outcome");
        foreach (var transport in new[] { "TcpClient2", "RestJson", "WebSocketClient" })
        {
            var row = faults.Row(transport);
            Assert.AreEqual(("KillServer", "5,000", "2", "resumed", "0", "0"), (row["Fault"], row["Records"], row["Runs"], row["Outcome"], row["Rows lost"], row["Rows duplicated"]), transport);
        }
        HostingTests.AssertNoProcessMentions(artifacts);
    }

    [TestMethod]
    public void RunAll_with_a_silence_in_every_repetition_rides_it_out_in_every_stream_transport()
    {
        using var artifacts = new TempDirectory("it-silence-");
        var (exitCode, output) = HostingTests.RunBuild("RunAll", artifacts, $"-p:Port={TestPorts.Free()}", $"-p:RelayPort={TestPorts.Free()}",
            "-p:Fault=Silence", "-p:SilenceSeconds=2", "-p:FaultAfterBytes=200000",
            "-p:Transports=TcpClientSingleThreadTest+TcpClient2+TcpClientMultiThreadTest3+HttpRequest+GrpcClient+GrpcStreaming+SoapSmallBatchesAsync+NetTcpSmallBatchesAsync+RestJson+WebSocketClient",
            $"-p:GrpcPort={TestPorts.Free()}", $"-p:SoapPort={TestPorts.Free()}", $"-p:NetTcpPort={TestPorts.Free()}", $"-p:RestPort={TestPorts.Free()}",
            $"-p:WebSocketPort={TestPorts.Free()}", "-p:RecordCounts=5000", "-p:Repetitions=1", "-p:Warmup=false", "-p:BatchSize=100", "-p:Peers=false");
        Assert.AreEqual(0, exitCode, output);
        var runs = MeasurementLog.Read(Path.Combine(artifacts, "results", "runs.jsonl"));
        Assert.HasCount(10, runs);
        Assert.IsTrue(runs.All(r => r.FaultInjected == true), string.Join("\n", runs));
        // Two seconds of nothing either way: every transport waits it out (no timeout is that short), with no break and every row once.
        foreach (var run in runs)
            Assert.IsTrue(run is { Completed: true, Fault: "Silence", Reconnects: 0 or null, RowsMatched: 5000, RowsDuplicated: 0 } && run.ElapsedSeconds >= 2, run.ToString());
        var silence = MarkdownTable.With(File.ReadAllText(Path.Combine(artifacts, "results", "results.md")), "Outcome").Row("TcpClient2");
        Assert.AreEqual(("Silence", "5,000", "1", "rode it out (no break)", "0", "0", "–"), (silence["Fault"], silence["Records"], silence["Runs"],
            silence["Outcome"], silence["Rows lost"], silence["Rows duplicated"], silence["Time to recover (s)"]));
        HostingTests.AssertNoProcessMentions(artifacts);
    }

    [TestMethod]
    public void A_latency_sweep_runs_each_transport_at_each_round_trip_through_the_relay()
    {
        using var artifacts = new TempDirectory("it-latency-");
        var (exitCode, output) = HostingTests.RunBuild("LatencySweep", artifacts, $"-p:Port={TestPorts.Free()}", $"-p:RelayPort={TestPorts.Free()}",
            "-p:SweepTransports=TcpClientSingleThreadTest+TcpClient2+RestJson+WebSocketClient", "-p:LatenciesMs=0+10",
            $"-p:RestPort={TestPorts.Free()}", $"-p:WebSocketPort={TestPorts.Free()}", "-p:SweepRecords=2000", "-p:BatchSize=200",
            "-p:Repetitions=2", "-p:Warmup=false");
        Assert.AreEqual(0, exitCode, output);
        var markdown = File.ReadAllText(Path.Combine(artifacts, "results", "results.md"));
        StringAssert.Contains(markdown, "## Latency sweep (2,000 records;");
        StringAssert.Contains(markdown, "| TcpClientSingleThreadTest | ");
        StringAssert.Contains(markdown, "| TcpClient2 (RTT 10 ms) |");
        var sweep = File.ReadAllLines(Path.Combine(artifacts, "results", "runs.jsonl"));
        foreach (var transport in new[] { "RestJson", "WebSocketClient" })
            Assert.HasCount(4, sweep.Where(l => l.Contains($"\"transport\":\"{transport}\"") && l.Contains("\"verified\":true")).ToList(), transport);
        StringAssert.Contains(File.ReadAllText(Path.Combine(artifacts, "results", "report.html")), "id=\"latency-sweep\"");
        // The lock-step client waited for ten round trips of 10 ms at least: the relay delayed it.
        var lockStep = File.ReadAllLines(Path.Combine(artifacts, "results", "runs.jsonl"))
            .Where(l => l.Contains("\"transport\":\"TcpClientSingleThreadTest\"") && l.Contains("\"latencyMs\":10")).ToList();
        Assert.HasCount(2, lockStep);
        HostingTests.AssertNoProcessMentions(artifacts);
    }
}
