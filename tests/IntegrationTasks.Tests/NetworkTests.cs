namespace IntegrationTasks.Tests;

/// <summary>Two simulated hosts and the network profiles: namespaces made and removed, RunAll and Load across the link. The one class that makes hosts.</summary>
[TestClass]
[TestCategory("EndToEnd")]
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
            // Measured from this process, a socket in each namespace: the link carries what tbf lets through, and no more.
            var link = await LinkProbe.MeasureAsync(hosts.ServerNamespace, hosts.ClientNamespace, TwoHosts.ClientAddress, CancellationToken.None);
            // (The bound leaves room for what the kernel buffered before the counted second; the unshaped veth carries many Gbit/s.)
            Assert.IsTrue(link is { RoundTripMs: > 0, Mbits: > 0 and <= 150 } && link.RoundTripP99Ms >= link.RoundTripMs, link.ToString());
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
    public async Task RunAll_on_two_hosts_moves_every_row_across_the_link_and_leaves_nothing_as_root()
    {
        using var artifacts = new TempDirectory("it-twohosts-");
        var arguments = TestBuild.Arguments("RunAll", artifacts, "-v:n", "-p:Hosts=Two", "-p:Network=Lan2014",
            "-p:Transports=TcpClient2+HttpRequest+GrpcClient+RestJson+WebSocketClient+RabbitMQDurable+NatsJetStream+RedisStreams+FileTransferRequest", "-p:RecordCounts=2000", "-p:Repetitions=1",
            "-p:Warmup=false", "-p:BatchSize=500", "-p:Peers=false");
        // While it runs, a scan of every server host: each port listening beyond loopback is one whose server takes only clients with
        // credentials — the web host's (its token) and the brokers' client ports (their user) — and nothing else.
        string[] credentialed = ["HttpPort", "GrpcPort", "RestPort", "WebSocketPort", "RabbitMQPort", "NatsPort", "RedisPort"];
        var allowed = arguments.Where(a => credentialed.Any(p => a.StartsWith($"-p:{p}=", StringComparison.Ordinal)))
            .ToDictionary(a => int.Parse(a[(a.IndexOf('=') + 1)..], System.Globalization.CultureInfo.InvariantCulture), a => a[3..a.IndexOf('=')]);
        var found = new System.Collections.Concurrent.ConcurrentDictionary<int, byte>();
        using var finished = new CancellationTokenSource();
        var scanning = Task.Run(async () =>
        {
            while (!finished.IsCancellationRequested)
            {
                foreach (var port in await ListeningBeyondLoopbackAsync())
                    found.TryAdd(port, 0);
                await Task.Delay(200);
            }
        });
        var (exitCode, stdout, stderr) = await Task.Run(() => RepositoryPaths.Run("dotnet", arguments));
        await finished.CancelAsync();
        await scanning;
        var output = stdout + stderr;
        Assert.AreEqual(0, exitCode, output);
        Assert.IsNotEmpty(found.Keys, "the scan saw the servers listen");
        Assert.IsEmpty(found.Keys.Where(p => !allowed.ContainsKey(p)).ToList(),
            string.Join("\n", found.Keys.Where(p => !allowed.ContainsKey(p)).Select(p => Listeners.GetValueOrDefault(p, p.ToString(System.Globalization.CultureInfo.InvariantCulture))))
            + "\nallowed: " + string.Join(", ", allowed));
        var runs = File.ReadAllLines(Path.Combine(artifacts, "results", "runs.jsonl"));
        Assert.HasCount(8, runs, output);
        Assert.IsTrue(runs.All(r => r.Contains("\"verified\":true")));
        // TCP's only credential is a client certificate: without Tls and ClientCertificates its server does not listen beyond loopback.
        var notRun = ResultsJson.Load(Path.Combine(artifacts, "results")).NotRun.Single(n => n.Transport == "TcpClient2");
        Assert.AreEqual("Run it with Tls=true and ClientCertificates=true", notRun.Fix);
        Assert.IsFalse(File.Exists(Path.Combine(artifacts, "logs", "TcpServer2.log")));
        // The servers listened on the server host's address, in its namespace, and the relay added the profile's latency.
        foreach (var server in new[] { "RestServer", "WebSocketServer" })
            StringAssert.Contains(File.ReadAllText(Path.Combine(artifacts, "logs", $"{server}.log")), $"http://{TwoHosts.ServerAddress}:", server);
        Assert.IsTrue(runs.Where(r => r.Contains("\"transport\":\"RestJson\"") || r.Contains("\"transport\":\"WebSocketClient\""))
            .All(r => r.Contains("\"throughRelay\":true") && r.Contains("\"latencyMs\":0.2")), string.Join("\n", runs));
        var markdown = File.ReadAllText(Path.Combine(artifacts, "results", "results.md"));
        StringAssert.Contains(markdown, "network: Lan2014 (0.2 ms round trip, 1000 Mbit/s)");
        StringAssert.Contains(markdown, "1000 Mbit/s), two hosts");
        StringAssert.StartsWith(ResultsJson.Load(Path.Combine(artifacts, "results")).Environment["Link"], "round trip ");
        var results = ResultsJson.Load(Path.Combine(artifacts, "results"));
        StringAssert.StartsWith(results.Environment["Note (file transfers)"], "FileTransferRequest and FileTransferBigRequest go through");
        // The queue transport's relay sits between its client and the broker on the server's host; only the files are not relayed.
        StringAssert.EndsWith(markdown.Split('\n').Single(l => l.Contains("Not through the delay relay", StringComparison.Ordinal)), ": FileTransferRequest.");
        foreach (var queue in new[] { "RabbitMQDurable", "NatsJetStream", "RedisStreams" })
            Assert.Contains($"\"transport\":\"{queue}\"", runs.Single(r => r.Contains("\"throughRelay\":true") && r.Contains(queue)));
        // Beyond loopback the brokers took only their own user.
        StringAssert.EndsWith(results.Environment["BrokerCredentials"], "(CredentialsFolder)");
        // And the web services only requests with their token.
        StringAssert.EndsWith(results.Environment["ServiceToken"], "(CredentialsFolder)");
        CollectionAssert.AreEquivalent(new[] { "NATS.json", "RabbitMQ.json", "Redis.json", "Services.json" },
            Directory.GetFiles(Path.Combine(artifacts, "credentials")).Select(Path.GetFileName).ToArray());
        Assert.IsEmpty(OurNamespacesAsync().GetAwaiter().GetResult(), "no namespace left");
        Assert.DoesNotContain("itv", Links());
        HostingTests.AssertEndedCleanly(artifacts);
    }

    [TestMethod]
    public async Task RunAll_bound_to_every_address_leaves_only_credentialed_ports_beyond_loopback()
    {
        using var artifacts = new TempDirectory("it-any-address-");
        var arguments = TestBuild.Arguments("RunAll", artifacts, "-v:n", "-p:BindAddress=0.0.0.0", "-p:Transports=TcpClient2+RestJson+NatsJetStream+ZeroMqDealer+PipelinedCopy",
            "-p:RecordCounts=2000", "-p:Repetitions=1", "-p:Warmup=false", "-p:Peers=false");
        string[] credentialed = ["RestPort", "NatsPort"];
        var ours = arguments.Where(a => a.StartsWith("-p:", StringComparison.Ordinal) && TestBuild.PortProperties.Contains(a[3..a.IndexOf('=')]))
            .ToDictionary(a => int.Parse(a[(a.IndexOf('=') + 1)..], System.Globalization.CultureInfo.InvariantCulture), a => a[3..a.IndexOf('=')]);
        var found = new System.Collections.Concurrent.ConcurrentDictionary<int, byte>();
        using var finished = new CancellationTokenSource();
        var scanning = Task.Run(async () =>
        {
            while (!finished.IsCancellationRequested)
            {
                foreach (var port in (await ListeningBeyondLoopbackAsync("")).Where(ours.ContainsKey))
                    found.TryAdd(port, 0);
                await Task.Delay(200);
            }
        });
        var (exitCode, stdout, stderr) = await Task.Run(() => RepositoryPaths.Run("dotnet", arguments));
        await finished.CancelAsync();
        await scanning;
        Assert.AreEqual(0, exitCode, stdout + stderr);
        // The web host listened on every address (with its token); the broker stays on its own address (NatsHostName, loopback).
        var listened = found.Keys.Select(p => ours[p]).Distinct().ToArray();
        CollectionAssert.Contains(listened, "RestPort", stdout);
        CollectionAssert.IsSubsetOf(listened, credentialed, stdout);
        var notRun = ResultsJson.Load(Path.Combine(artifacts, "results")).NotRun;
        CollectionAssert.IsSubsetOf(new[] { "TcpClient2", "ZeroMqDealer" }, notRun.Select(n => n.Transport).ToArray());
        HostingTests.AssertEndedCleanly(artifacts);
    }

    [TestMethod]
    public async Task RunAll_on_two_hosts_of_their_own_CPUs_over_TLS_verifies_every_row_through_the_relay_as_root()
    {
        using var artifacts = new TempDirectory("it-twohosts-tls-");
        var arguments = TestBuild.Arguments("RunAll", artifacts, "-p:Hosts=Two", "-p:HostCpus=Split", "-p:Network=Lan2014", "-p:Tls=true", "-p:ClientCertificates=true",
            "-p:Transports=TcpClient2+WebSocketClient+RabbitMQDurable+RedisStreams+PipelinedCopy", "-p:RecordCounts=2000", "-p:Repetitions=1",
            "-p:Warmup=false", "-p:BatchSize=500", "-p:Peers=false");
        // While it runs, every process of each host (its network namespace's) and the CPUs it may run on.
        var expected = HostCpus.Parse(HostCpus.SplitValue, Environment.ProcessorCount)!;
        var seen = new System.Collections.Concurrent.ConcurrentDictionary<(string Host, string Cpus), int>();
        using var finished = new CancellationTokenSource();
        var scanning = Task.Run(async () =>
        {
            while (!finished.IsCancellationRequested)
            {
                foreach (var ns in await OurNamespacesAsync())
                {
                    var host = ns.StartsWith("it-srv-", StringComparison.Ordinal) ? "server" : "client";
                    foreach (var pid in RepositoryPaths.Run("ip", ["netns", "pids", ns]).Stdout.Split('\n', StringSplitOptions.RemoveEmptyEntries))
                        if (AllowedCpus(pid.Trim()) is { } cpus)
                            seen.AddOrUpdate((host, cpus), 1, (_, n) => n + 1);
                }
                await Task.Delay(200);
            }
        });
        var (exitCode, stdout, stderr) = await Task.Run(() => RepositoryPaths.Run("dotnet", arguments));
        await finished.CancelAsync();
        await scanning;
        var output = stdout + stderr;
        Assert.AreEqual(0, exitCode, output);
        // Each host's processes ran on its own CPUs alone: the servers and brokers on the server's, the builds, relay and clients on the client's.
        // A pairing read once only is a process caught between its launch's steps (the scan reads a namespace's list, then each
        // process, 200 ms apart); one that works on the wrong CPUs is read again and again.
        CollectionAssert.AreEquivalent(new[] { ("server", expected.Server), ("client", expected.Client) }, seen.Where(s => s.Value > 1).Select(s => s.Key).ToArray(),
            string.Join(", ", seen.Select(s => $"{s.Key}×{s.Value}")));
        var runs = MeasurementLog.Read(Path.Combine(artifacts, "results", "runs.jsonl"));
        Assert.HasCount(5, runs, output);
        Assert.IsTrue(runs.All(r => r.Verified && r.Key is { Tls: true, Hosts: "Two" } && r.Key.HostCpus == expected.ToString()), output);
        // The certificate names the server host's address; the relay on the client's host passes TLS through untouched.
        Assert.IsTrue(runs.Where(r => r.Kind == RunKind.Transport).All(r => r.ThroughRelay == true), output);
        StringAssert.Contains(File.ReadAllText(Path.Combine(artifacts, "logs", "TcpServer2.log")), $"tcp://{TwoHosts.ServerAddress}:");
        Assert.IsEmpty(await OurNamespacesAsync(), "no namespace left");
        Assert.IsEmpty(OurCpuSets(), "no cpuset left");
        HostingTests.AssertEndedCleanly(artifacts);
    }

    [TestMethod]
    public async Task Deploy_reaches_the_server_host_through_an_sshd_of_its_own_as_root()
    {
        using var artifacts = new TempDirectory("it-twohosts-ssh-");
        await using var hosts = await TwoHosts.CreateAsync(Environment.ProcessId, bandwidthMbit: null, NullEventLog.Instance, CancellationToken.None);
        // The server host as another machine: Debian's sshd on its address, inside its namespace only.
        using var ssh = TestSshServer.Start(Path.Combine(artifacts, "sshd"), TwoHosts.ServerAddress, 22, TwoHosts.Exec(hosts.ServerNamespace));
        var remote = Path.Combine(artifacts, "server-machine");
        // Typed on the client host, which reaches that address only across the link.
        var (exitCode, stdout, stderr) = await Task.Run(() => RepositoryPaths.Run("ip", [.. TwoHosts.Exec(hosts.ClientNamespace).Skip(1), "dotnet",
            .. TestBuild.Arguments("Deploy", Path.Combine(artifacts, "client"), $"-p:ServerMachine=root@{TwoHosts.ServerAddress}", $"-p:SshConfig={ssh.ConfigFile}",
                $"-p:RemoteFolder={remote}", "-p:Brokers=RabbitMQ+NATS+Redis")]));
        Assert.AreEqual(0, exitCode, stdout + stderr);
        Assert.IsTrue(File.Exists(Path.Combine(Directory.GetDirectories(remote, "suite-*").Single(), ".complete")), stdout);
        StringAssert.Contains(stdout, $"root@{TwoHosts.ServerAddress}: ");
    }

    [TestMethod]
    [Timeout(900_000, CooperativeCancellation = true)]
    public async Task RunAll_runs_its_servers_on_a_server_machine_over_ssh_and_leaves_nothing_there_as_root()
    {
        using var artifacts = new TempDirectory("it-servermachine-");
        await using var hosts = await TwoHosts.CreateAsync(Environment.ProcessId, bandwidthMbit: null, NullEventLog.Instance, CancellationToken.None, clientHosts: 2);
        // The server host as another machine, reached only through its sshd; the build typed on the client host.
        using var ssh = TestSshServer.Start(Path.Combine(artifacts, "sshd"), TwoHosts.ServerAddress, 22, TwoHosts.Exec(hosts.ServerNamespace));
        var remote = Path.Combine(artifacts, "server-machine");
        var client = Path.Combine(artifacts, "client");
        var arguments = TestBuild.Arguments("RunAll", client, $"-p:ServerMachine=root@{TwoHosts.ServerAddress}", $"-p:SshConfig={ssh.ConfigFile}",
            $"-p:RemoteFolder={remote}", "-p:Transports=TcpClient2+GrpcClient+RestJson+NatsJetStream+FileTransferBigRequest+PipelinedCopy", "-p:RecordCounts=2000",
            "-p:Repetitions=1", "-p:Warmup=false", "-p:BatchSize=500", "-p:Peers=false");
        // While it runs, a scan of the server machine: what listens beyond its loopback is sshd and the run's servers and brokers,
        // each over TLS with client certificates (the default between machines), and nothing else.
        string[] credentialed = ["Port", "GrpcPort", "RestPort", "NatsPort"];
        var allowed = arguments.Where(a => credentialed.Any(p => a.StartsWith($"-p:{p}=", StringComparison.Ordinal)))
            .Select(a => int.Parse(a[(a.IndexOf('=') + 1)..], System.Globalization.CultureInfo.InvariantCulture)).Append(22).ToHashSet();
        var found = new System.Collections.Concurrent.ConcurrentDictionary<int, byte>();
        using var finished = new CancellationTokenSource();
        var scanning = Task.Run(async () =>
        {
            while (!finished.IsCancellationRequested)
            {
                foreach (var port in await ListeningBeyondLoopbackAsync(hosts.ServerNamespace))
                    found.TryAdd(port, 0);
                await Task.Delay(200);
            }
        });
        var (exitCode, stdout, stderr) = await Task.Run(() => RepositoryPaths.Run("ip", [.. TwoHosts.Exec(hosts.ClientNamespace).Skip(1), "dotnet", .. arguments]));
        await finished.CancelAsync();
        await scanning;
        var output = stdout + stderr;
        Assert.AreEqual(0, exitCode, output);
        Assert.IsGreaterThan(1, found.Count, "the scan saw the servers listen there");
        Assert.IsEmpty(found.Keys.Where(p => !allowed.Contains(p)).ToList(),
            string.Join("\n", found.Keys.Where(p => !allowed.Contains(p)).Select(p => Listeners.GetValueOrDefault(p, p.ToString(System.Globalization.CultureInfo.InvariantCulture)))));

        // Every row verified here, each server's CPU and peak read there, every run keyed as two machines'.
        var runs = File.ReadAllLines(Path.Combine(client, "results", "runs.jsonl")).Select(l => System.Text.Json.JsonDocument.Parse(l).RootElement).ToList();
        Assert.HasCount(5, runs, output);
        foreach (var run in runs)
        {
            Assert.AreEqual((true, "TwoMachines", true), (run.GetProperty("verified").GetBoolean(), Text(run, "hosts"), run.TryGetProperty("tls", out var tls) && tls.GetBoolean()),
                run + output); // TLS between machines unless said otherwise
        }
        foreach (var run in runs.Where(r => Text(r, "transport") != "PipelinedCopy"))
            Assert.IsTrue(run.TryGetProperty("serverCpuSeconds", out var cpu) && cpu.GetDouble() > 0 && run.TryGetProperty("serverPeakBytes", out var peak) && peak.GetInt64() > 10_000_000,
                run + output);
        // The servers ran there: their logs here are their output, listening on the server machine's address.
        StringAssert.Contains(File.ReadAllText(Path.Combine(client, "logs", "GrpcServer.log")), $"https://{TwoHosts.ServerAddress}:");
        // From the copy placed there, not from this checkout: each build there says which project it runs.
        foreach (var log in new[] { "TcpServer2.log", "RestServer.log", "NatsJetStreamServer.log", "NATS.broker-host.log" })
            StringAssert.Contains(File.ReadAllText(Path.Combine(client, "logs", log)), $"Project \"{remote}/suite-", log);
        StringAssert.Contains(output, $"ServiceTable on root@{TwoHosts.ServerAddress}: sha256:");
        var results = ResultsJson.Load(Path.Combine(client, "results"));
        StringAssert.StartsWith(results.Environment["ServerMachine"], $"root@{TwoHosts.ServerAddress} ({TwoHosts.ServerAddress}): ");
        Assert.IsTrue(results.Environment.ContainsKey("Verification"));
        StringAssert.StartsWith(results.Environment["Link"], "round trip ", "the link between the machines, measured");
        // What cannot cross machines is listed as not run, with why.
        CollectionAssert.Contains(results.NotRun.Select(n => n.Transport).ToArray(), "FileTransferBigRequest");

        // Nothing of the run is left there: no process but sshd in the server's namespace, no response file with its passwords.
        await Eventually.WaitUntilAsync(() => ProcessesIn(hosts.ServerNamespace).All(name => name == "sshd"), "only sshd left on the server machine",
            TimeSpan.FromSeconds(30), () => string.Join(", ", ProcessesIn(hosts.ServerNamespace)));
        Assert.IsEmpty(Directory.GetFiles(Path.Combine(remote, "runs"), "*.rsp", SearchOption.AllDirectories));
        HostingTests.AssertEndedCleanly(client);

        // KillServer across machines: the server's tree killed there mid-transfer, started again over the connection, the rows resumed.
        (exitCode, stdout, stderr) = await Task.Run(() => RepositoryPaths.Run("ip", [.. TwoHosts.Exec(hosts.ClientNamespace).Skip(1), "dotnet",
            .. TestBuild.Arguments("RunAll", client, $"-p:ServerMachine=root@{TwoHosts.ServerAddress}", $"-p:SshConfig={ssh.ConfigFile}",
                $"-p:RemoteFolder={remote}", "-p:Transports=TcpClient2", "-p:Fault=KillServer", "-p:FaultAfterBytes=200000", "-p:RecordCounts=5000",
                "-p:Repetitions=1", "-p:Warmup=false", "-p:BatchSize=100", "-p:Peers=false")]));
        output = stdout + stderr;
        Assert.AreEqual(0, exitCode, output);
        var killed = MeasurementLog.Read(Path.Combine(client, "results", "runs.jsonl")).Single();
        Assert.IsTrue(killed is { FaultInjected: true, Completed: true, Reconnects: >= 1, RowsMatched: 5000, RowsDuplicated: 0 }, killed + output);
        var serverLog = File.ReadAllLines(Path.Combine(client, "logs", "TcpServer2.log"));
        Assert.AreEqual(1, serverLog.Count(l => l.Contains("TcpServer2 is back (process", StringComparison.Ordinal)), string.Join("\n", serverLog));
        await Eventually.WaitUntilAsync(() => ProcessesIn(hosts.ServerNamespace).All(name => name == "sshd"), "only sshd left after the kill and the stop",
            TimeSpan.FromSeconds(30), () => string.Join(", ", ProcessesIn(hosts.ServerNamespace)));

        // Two client machines (the client hosts, routed to each other through the server's host as on one LAN, each with its sshd):
        // each run's clients on both at once, merged into one run, every row verified on the machine that wrote it.
        RepositoryPaths.Run("ip", [.. TwoHosts.Exec(hosts.ServerNamespace).Skip(1), "sysctl", "-qw", "net.ipv4.ip_forward=1"]);
        RepositoryPaths.Run("ip", ["-n", hosts.ClientNamespaces[0], "route", "add", $"{TwoHosts.ClientAddressOf(1)}/32", "via", "198.18.0.1"]);
        RepositoryPaths.Run("ip", ["-n", hosts.ClientNamespaces[1], "route", "add", $"{TwoHosts.ClientAddressOf(0)}/32", "via", "198.18.0.5"]);
        using var clientA = TestSshServer.Start(Path.Combine(artifacts, "sshd-a"), TwoHosts.ClientAddressOf(0), 22, TwoHosts.Exec(hosts.ClientNamespaces[0]));
        using var clientB = TestSshServer.Start(Path.Combine(artifacts, "sshd-b"), TwoHosts.ClientAddressOf(1), 22, TwoHosts.Exec(hosts.ClientNamespaces[1]));
        var allMachines = Path.Combine(artifacts, "ssh_config_all");
        File.WriteAllText(allMachines, string.Concat(new[] { ssh, clientA, clientB }.Select(m => File.ReadAllText(m.ConfigFile))));
        var together = Path.Combine(artifacts, "together");
        (exitCode, stdout, stderr) = await Task.Run(() => RepositoryPaths.Run("ip", [.. TwoHosts.Exec(hosts.ClientNamespace).Skip(1), "dotnet",
            .. TestBuild.Arguments("RunAll", together, $"-p:ServerMachine=root@{TwoHosts.ServerAddress}", $"-p:SshConfig={allMachines}", $"-p:RemoteFolder={remote}",
                $"-p:ClientMachines=root@{TwoHosts.ClientAddressOf(0)}+root@{TwoHosts.ClientAddressOf(1)}", "-p:Transports=TcpClient2+RestJson+NatsJetStream+RedisStreams+RabbitMQDurable",
                "-p:RecordCounts=2000", "-p:Clients=2", "-p:Repetitions=1", "-p:Warmup=false", "-p:BatchSize=250", "-p:Peers=false")]));
        output = stdout + stderr;
        Assert.AreEqual(0, exitCode, output);
        var merged = MeasurementLog.Read(Path.Combine(together, "results", "runs.jsonl"));
        Assert.HasCount(5, merged, output);
        foreach (var run in merged)
            Assert.IsTrue(run is { Verified: true, ClientMachines: 2, Clients: 4, Records: 4000, RowsMatched: 4000, Hosts: "TwoMachines" } && run.BatchLatency!.Batches == 16, run + output);
        StringAssert.Contains(ResultsJson.Load(Path.Combine(together, "results")).Environment["ClientMachines"], $"root@{TwoHosts.ClientAddressOf(1)}: ");
        // RabbitMQ hosted there as NATS was: the build there says which project it runs, the deployed copy.
        StringAssert.Contains(File.ReadAllText(Path.Combine(together, "logs", "RabbitMQ.broker-host.log")), $"Project \"{remote}/suite-");
        // Each client machine worked in the run's folder there (its own ServiceTable and ClientTable), not in its copy of the suite.
        foreach (var role in new[] { "client-1", "client-2" })
            Assert.IsTrue(File.Exists(Path.Combine(remote, "runs", $"{Environment.MachineName}-{role}", "artifacts", "data", "client.db")), role);
        await Eventually.WaitUntilAsync(() => hosts.ClientNamespaces.Skip(1).Append(hosts.ServerNamespace).SelectMany(ProcessesIn).All(name => name == "sshd"),
            "only sshd left on the server and client machines", TimeSpan.FromSeconds(30), () => string.Join(", ", ProcessesIn(hosts.ClientNamespaces[1])));

        // Plaintext between the machines only when said: then without client certificates, a web service behind its token, and the
        // report says the link was plaintext. In the same RunAll, RestartBroker across machines: the broker there asked to stop
        // mid-transfer through the connection, started again by the build that holds it there, the rows resumed.
        var plain = Path.Combine(artifacts, "plain");
        (exitCode, stdout, stderr) = await Task.Run(() => RepositoryPaths.Run("ip", [.. TwoHosts.Exec(hosts.ClientNamespace).Skip(1), "dotnet",
            .. TestBuild.Arguments("RunAll", plain, $"-p:ServerMachine=root@{TwoHosts.ServerAddress}", $"-p:SshConfig={ssh.ConfigFile}", $"-p:RemoteFolder={remote}",
                "-p:Tls=false", "-p:Transports=RestJson+NatsJetStream", "-p:Fault=RestartBroker", "-p:FaultAfterBytes=200000", "-p:RecordCounts=5000",
                "-p:Repetitions=1", "-p:Warmup=false", "-p:BatchSize=100", "-p:Peers=false")]));
        output = stdout + stderr;
        Assert.AreEqual(0, exitCode, output);
        var plainRuns = MeasurementLog.Read(Path.Combine(plain, "results", "runs.jsonl")).ToDictionary(r => r.Transport);
        Assert.IsTrue(plainRuns["RestJson"] is { Verified: true, Tls: null }, output);
        Assert.IsTrue(plainRuns["NatsJetStream"] is { Fault: "RestartBroker", FaultInjected: true, Completed: true, Verified: true, Reconnects: >= 1, RowsMatched: 5000, RowsDuplicated: 0 },
            plainRuns["NatsJetStream"] + output);
        // Started again once, by the build holding it there: the broker's own log there says so.
        var brokerLog = File.ReadAllText(Path.Combine(remote, "runs", $"{Environment.MachineName}-server", "artifacts", "nats", "nats-server.log"));
        Assert.AreEqual(1, Regex.Count(brokerLog, ErrorCodes.ServerRestarted), brokerLog);
        var plainEnvironment = ResultsJson.Load(Path.Combine(plain, "results")).Environment;
        StringAssert.StartsWith(plainEnvironment["Encryption"], "none");
        StringAssert.EndsWith(plainEnvironment["ServiceToken"], "(CredentialsFolder)");
        // What was sent there is gone with the run: no key, token or response file is left in the run's folder.
        Assert.IsEmpty(Directory.GetFiles(Path.Combine(remote, "runs"), "*", SearchOption.AllDirectories)
            .Where(f => f.EndsWith(".rsp", StringComparison.Ordinal) || f.EndsWith(".key", StringComparison.Ordinal) || f.Contains("/credentials/", StringComparison.Ordinal)).ToList());
        await Eventually.WaitUntilAsync(() => ProcessesIn(hosts.ServerNamespace).All(name => name == "sshd"), "only sshd left after the broker's restart and the stop",
            TimeSpan.FromSeconds(30), () => string.Join(", ", ProcessesIn(hosts.ServerNamespace)));

        // SIGTERM here mid-run, then the connection lost mid-run: either way the build ends, and nothing is left there.
        foreach (var ending in new[] { "SIGTERM", "connection lost" })
        {
            using var ended = new TempDirectory("it-servermachine-end-");
            using var build = HandStartedServer.StartIn(TwoHosts.Exec(hosts.ClientNamespace), "RunAll", ended, TestPorts.Free(),
                $"-p:ServerMachine=root@{TwoHosts.ServerAddress}", $"-p:SshConfig={ssh.ConfigFile}", $"-p:RemoteFolder={remote}", "-p:Transports=TcpClient2",
                "-p:RecordCounts=5000", "-p:Repetitions=100", "-p:Warmup=false", "-p:Peers=false");
            await build.Screen.WaitForAsync("repetition 1 of 100", TimeSpan.FromSeconds(180));
            if (ending == "SIGTERM")
                RepositoryPaths.Run("kill", ["-TERM", build.Process.Id.ToString(System.Globalization.CultureInfo.InvariantCulture)]);
            else
                RepositoryPaths.Run("pkill", ["-KILL", "-f", $"ControlPath={ended}/logs/ssh-.*ControlMaster=yes"]);
            await build.Process.WaitForExitAsync().WaitAsync(TimeSpan.FromSeconds(120));
            Assert.AreEqual(ending == "SIGTERM" ? IntegrationTasks.Common.BuildTermination.ExitCode : 1, build.Process.ExitCode, build.Screen.ToString());
            if (ending != "SIGTERM")
                Assert.IsTrue(build.Screen.Lines.Any(l => l.Contains($"error {ErrorCodes.RemoteUnreachable}: The ssh connection to root@{TwoHosts.ServerAddress} was lost", StringComparison.Ordinal)),
                    build.Screen.ToString());
            await Eventually.WaitUntilAsync(() => ProcessesIn(hosts.ServerNamespace).All(name => name == "sshd"), $"only sshd left after {ending}",
                TimeSpan.FromSeconds(30), () => string.Join(", ", ProcessesIn(hosts.ServerNamespace)));
            HostingTests.AssertEndedCleanly(ended);
        }
    }

    private static string? Text(System.Text.Json.JsonElement run, string name) => run.TryGetProperty(name, out var value) ? value.GetString() : null;

    /// <summary>The names of the processes in a namespace.</summary>
    private static List<string> ProcessesIn(string nameSpace) =>
        [.. RepositoryPaths.Run("ip", ["netns", "pids", nameSpace]).Stdout.Split('\n', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries)
            .Select(pid => { try { return File.ReadAllText($"/proc/{pid}/comm").Trim(); } catch (IOException) { return "sshd"; } })];

    /// <summary>
    /// A process's Cpus_allowed_list, or null once it is gone, and for the launch prefix's own steps (its join script, then
    /// ip netns exec): they move into the server's CPUs a moment before they move into its namespace.
    /// </summary>
    private static string? AllowedCpus(string pid)
    {
        try
        {
            var status = File.ReadLines($"/proc/{pid}/status").ToList();
            if (status.FirstOrDefault(l => l.StartsWith("Name:", StringComparison.Ordinal))?.Split(':')[1].Trim() is "ip" or "server-cpus.sh" or "client-cpus.sh")
                return null;
            return status.FirstOrDefault(l => l.StartsWith("Cpus_allowed_list:", StringComparison.Ordinal))?.Split(':')[1].Trim();
        }
        catch (IOException)
        {
            return null;
        }
    }

    private static string[] OurCpuSets() =>
        HostCpuSets.Hierarchy() is { } hierarchy ? Directory.GetDirectories(hierarchy.Root, "integrationtasks-*") : [];

    [TestMethod]
    [TestCategory("Unit")]
    public void HostCpus_takes_two_disjoint_lists_of_this_machines_CPUs_or_Split()
    {
        Assert.IsNull(HostCpus.Parse("", 2));
        Assert.AreEqual(new HostCpus("0", "1"), HostCpus.Parse("Split", 2));
        Assert.AreEqual(new HostCpus("0-3", "4-7"), HostCpus.Parse("split", 8));
        Assert.AreEqual(new HostCpus("0", "1-2"), HostCpus.Parse("0/1-2", 3));
        Assert.AreEqual("0,2/1,3", HostCpus.Parse("0,2/1,3", 4)!.ToString());
        Assert.AreEqual("0-1/2-3", HostCpus.Parse(" 1,0 / 2-3 ", 4)!.ToString()); // one split, one key, however it was typed
        foreach (var (value, cpus) in new[] { ("Split", 1), ("0", 2), ("0/1/2", 4), ("0-1/1", 2), ("0/2", 2), ("a/1", 2), ("1-0/2", 4), ("0/", 2) })
            Assert.AreEqual(ErrorCodes.InvalidParameter, Assert.ThrowsExactly<IntegrationException>(() => HostCpus.Parse(value, cpus)).Code, value);
    }

    [TestMethod]
    [Timeout(600_000, CooperativeCancellation = true)]
    public async Task On_two_hosts_every_broker_refuses_a_client_without_its_credentials_as_root()
    {
        using var artifacts = new TempDirectory("it-twohost-brokers-");
        await using var hosts = await TwoHosts.CreateAsync(Environment.ProcessId, bandwidthMbit: null, NullEventLog.Instance, CancellationToken.None);
        var onServerHost = TwoHosts.Exec(hosts.ServerNamespace);
        // Each broker as the build starts it on the server's host: at its address, with the credentials it made.
        BrokerCredentials Made(string broker) => BrokerCredentials.ForBroker(broker, TwoHosts.ServerAddress, Path.Combine(artifacts, "credentials", broker + ".json"))!;
        var (redisPort, natsPort, amqpPort) = (TestPorts.Free(), TestPorts.Free(), TestPorts.Free());
        using var redis = await RedisServerProcess.StartAsync(new RedisServerOptions
        {
            Directory = Path.Combine(artifacts, "redis"), Port = redisPort, BindAddress = TwoHosts.ServerAddress, CommandPrefix = onServerHost, Credentials = Made("Redis"),
        }, null, TimeSpan.FromSeconds(60), CancellationToken.None);
        using var nats = await NatsServerProcess.StartAsync(new NatsServerOptions
        {
            Directory = Path.Combine(artifacts, "nats"), Port = natsPort, BindAddress = TwoHosts.ServerAddress, CommandPrefix = onServerHost, Credentials = Made("NATS"),
        }, null, TimeSpan.FromSeconds(60), CancellationToken.None);
        using var rabbitmq = await RabbitMqNode.StartAsync(new RabbitMqNodeOptions
        {
            Directory = Path.Combine(artifacts, "rabbitmq"), AmqpPort = amqpPort, DistributionPort = TestPorts.Free(), EpmdPort = TestPorts.Free(),
            BindAddress = TwoHosts.ServerAddress, CommandPrefix = onServerHost, Credentials = Made("RabbitMQ"),
        }, null, TimeSpan.FromSeconds(120), CancellationToken.None);
        try
        {
            // A scan of the server's host: beyond loopback nothing listens but the three brokers' client ports (not the Erlang
            // distribution port, epmd, or a monitoring port), and each of those refuses a client without credentials below.
            CollectionAssert.AreEqual(new[] { redisPort, natsPort, amqpPort }.Order().ToArray(), (await ListeningBeyondLoopbackAsync(hosts.ServerNamespace)).Order().ToArray());
            // From the client's host, without credentials (RabbitMQ's client then tries guest): each refused with IT3010, nothing moved.
            foreach (var (transport, address) in new[]
                     {
                         ("RedisStreams", $"-p:RedisEndpoint={TwoHosts.ServerAddress}:{redisPort}"), ("NatsJetStream", $"-p:NatsUrl=nats://{TwoHosts.ServerAddress}:{natsPort}"),
                         ("RabbitMQDurable", $"-p:RabbitMQHostName={TwoHosts.ServerAddress}"),
                     })
            {
                var (exitCode, stdout, stderr) = await Task.Run(() => RepositoryPaths.Run("ip",
                [
                    .. TwoHosts.Exec(hosts.ClientNamespace).Skip(1), "dotnet", .. TestBuild.Arguments(transport, Path.Combine(artifacts, transport)),
                    address, $"-p:RabbitMQPort={amqpPort}", "-p:BrokerCredentials=false", "-p:Records=100", "-p:BatchSize=50", "-p:TimeoutSeconds=60",
                ]));
                Assert.AreNotEqual(0, exitCode, stdout);
                CollectionAssert.AreEqual(new[] { ErrorCodes.CredentialsRefused }, ErrorLines(stdout), transport + ": " + stdout + stderr);
            }
        }
        finally
        {
            await Task.WhenAll(redis.StopAsync(CancellationToken.None), nats.StopAsync(CancellationToken.None), rabbitmq.StopAsync(CancellationToken.None));
        }
    }

    /// <summary>
    /// The TCP ports listening beyond loopback in a server host's namespace, in this machine's own (""), or in every server host's
    /// there is now (one of each two-host build).
    /// </summary>
    private static async Task<IReadOnlyList<int>> ListeningBeyondLoopbackAsync(string? serverNamespace = null)
    {
        var (_, namespaces, _) = await Task.Run(() => RepositoryPaths.Run("ip", ["netns", "list"]));
        var ports = new List<int>();
        // "": this machine's own namespace, where a one-host run with BindAddress=0.0.0.0 listens.
        IEnumerable<string> names = serverNamespace == "" ? [""] : namespaces.Split('\n', StringSplitOptions.RemoveEmptyEntries).Select(l => l.Split(' ')[0])
            .Where(n => serverNamespace is null ? n.StartsWith("it-srv-", StringComparison.Ordinal) : n == serverNamespace);
        foreach (var name in names)
        {
            var (exitCode, listening, _) = await Task.Run(() => name.Length == 0 ? RepositoryPaths.Run("ss", ["-ltnHpe"]) : RepositoryPaths.Run("ip", ["netns", "exec", name, "ss", "-ltnHpe"]));
            if (exitCode != 0)
                continue; // gone meanwhile
            foreach (var line in listening.Split('\n', StringSplitOptions.RemoveEmptyEntries))
            {
                var local = line.Split(' ', StringSplitOptions.RemoveEmptyEntries)[3];
                if (local.StartsWith("127.", StringComparison.Ordinal) || local.StartsWith("[::1]", StringComparison.Ordinal))
                    continue;
                var port = int.Parse(local[(local.LastIndexOf(':') + 1)..], System.Globalization.CultureInfo.InvariantCulture);
                ports.Add(port);
                // Which process, for a failure's message: ss names it, or (a socket of a process it could not read) its inode does.
                Listeners[port] = line.Contains("users:", StringComparison.Ordinal) ? line.Trim() : $"{line.Trim()} {OwnerOfSocket(line)}";
            }
        }
        return ports;
    }

    /// <summary>The process holding the socket of an <c>ss -e</c> line (by its inode), with its command line; "unknown" once it is gone.</summary>
    private static string OwnerOfSocket(string line)
    {
        var inode = System.Text.RegularExpressions.Regex.Match(line, @"ino:(\d+)").Groups[1].Value;
        foreach (var process in Directory.EnumerateDirectories("/proc").Where(d => int.TryParse(Path.GetFileName(d), out _)))
        {
            try
            {
                if (Directory.EnumerateFileSystemEntries(Path.Combine(process, "fd")).Any(fd => new FileInfo(fd).LinkTarget == $"socket:[{inode}]"))
                    return $"(process {Path.GetFileName(process)}: {File.ReadAllText(Path.Combine(process, "cmdline")).Replace('\0', ' ').Trim()})";
            }
            catch (Exception e) when (e is IOException or UnauthorizedAccessException)
            {
                // gone meanwhile, or not ours to read
            }
        }
        return $"(socket {inode}: owner unknown)";
    }

    /// <summary>The last line the scans saw for each port (its process), to name what listened where it should not.</summary>
    private static readonly System.Collections.Concurrent.ConcurrentDictionary<int, string> Listeners = new();

    /// <summary>The distinct codes of a build's error lines.</summary>
    private static string[] ErrorLines(string output) =>
        [.. System.Text.RegularExpressions.Regex.Matches(output, @"error (IT\d{4}):").Select(m => m.Groups[1].Value).Distinct()];

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
        // The server's machine: a server started by hand, listening on its address; beyond loopback TCP takes only clients with a
        // certificate of its authority (the folder a client machine is given: here, one disk for all three).
        var tls = new[] { "-p:Tls=true", "-p:ClientCertificates=true", $"-p:TlsFolder={Path.Combine(artifacts, "tls")}" };
        using var server = HandStartedServer.StartIn(TwoHosts.Exec(hosts.ServerNamespace), "TcpServer2", artifacts, port,
            [$"-p:BindAddress={TwoHosts.ServerAddress}", $"-p:ServerConnString={serverConnString}", .. tls]);
        await server.Screen.WaitForAsync(IntegrationTasks.Hosting.ServerSignals.ReadyMarker, TimeSpan.FromSeconds(60));

        // Two client machines, each 2 clients over all 2,400 records into its own ClientTable, started to begin at the same moment.
        var startAt = DateTimeOffset.UtcNow.AddSeconds(20).ToString("yyyy-MM-ddTHH:mm:ssZ", System.Globalization.CultureInfo.InvariantCulture);
        var machines = new[] { "a", "b" }.Select((name, k) => Task.Run(() => RepositoryPaths.Run("ip",
        [
            .. TwoHosts.Exec(hosts.ClientNamespaces[k]).Skip(1), "dotnet", .. TestBuild.Arguments("ClientMachineRun", Path.Combine(artifacts, name)),
            "-p:Transport=TcpClient2", $"-p:HostName={TwoHosts.ServerAddress}", $"-p:Port={port}", "-p:Clients=2", "-p:Records=2400", "-p:BatchSize=200",
            $"-p:StartAt={startAt}", $"-p:ClientMachine={name}", $"-p:ServerConnString={serverConnString}",
            $"-p:ClientConnString=Data Source={Path.Combine(artifacts, name + "-client.db")}", .. tls,
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
        Assert.IsTrue(ResultsJson.Load(Path.Combine(artifacts, "merged", "results")).HasRow("TcpClient2 (4 clients, 2 client machines, TLS)"));
        await server.InterruptAsync();
        await server.Process.WaitForExitAsync().WaitAsync(TimeSpan.FromSeconds(60));
    }

    [TestMethod]
    public void Load_on_two_hosts_runs_many_clients_across_the_link_with_a_network_profile()
    {
        using var artifacts = new TempDirectory("it-twohosts-load-");
        // Beyond loopback TCP's server takes only clients with a certificate of its authority.
        var (exitCode, output) = HostingTests.RunBuild("Load", artifacts, "-p:Hosts=Two", "-p:Network=Lan2014", "-p:Tls=true", "-p:ClientCertificates=true",
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
        StringAssert.StartsWith(ResultsJson.Load(Path.Combine(artifacts, "results", "load")).Environment["Link"], "round trip ");
        StringAssert.Contains(markdown, "## Many clients at once");
        Assert.IsEmpty(OurNamespacesAsync().GetAwaiter().GetResult(), "no namespace left");
        Assert.DoesNotContain("itv", Links());
    }
}
