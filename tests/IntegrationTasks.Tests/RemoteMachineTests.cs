using IntegrationTasks.Hosting.Remote;
using TaskItem = Microsoft.Build.Utilities.TaskItem;

namespace IntegrationTasks.Tests;

/// <summary>Other machines over ssh: named safely, reached in batch mode with known host keys only, checked, given the suite once.</summary>
[TestClass]
public sealed class RemoteMachineTests
{
    [TestMethod]
    [TestCategory("Unit")]
    public void A_machine_is_user_at_host_and_nothing_ssh_could_read_as_an_option()
    {
        foreach (var good in new[] { "root@198.18.0.1", "build-box", "me@db1.example.org", "alias_2" })
            Assert.AreEqual(good, SshMachine.Parse(good, null, "ServerMachine").Destination);
        foreach (var bad in new[] { "", "-oProxyCommand=x", "root@", "a b", "host;reboot", "@host", "$(id)" })
            Assert.AreEqual(ErrorCodes.InvalidParameter, Assert.ThrowsExactly<IntegrationException>(() => SshMachine.Parse(bad, null, "ServerMachine")).Code, bad);
        Assert.AreEqual(ErrorCodes.InvalidParameter, Assert.ThrowsExactly<IntegrationException>(() => SshMachine.Parse("host", "/nonexistent/config", "ServerMachine")).Code);
        var words = SshMachine.Parse("root@host", null, "ServerMachine").Command(["sh", "-c", "echo it's"]);
        CollectionAssert.IsSubsetOf(new[] { "BatchMode=yes", "StrictHostKeyChecking=yes" }, words.ToArray());
        Assert.AreEqual("sh -c 'echo it'\\''s'", words[^1]);
        Assert.AreEqual("--", words[^2]);
        Assert.AreEqual("root@host", words[^3]);
    }

    [TestMethod]
    [TestCategory("Unit")]
    public void A_machines_facts_name_what_it_lacks_with_its_package()
    {
        RemoteRequirement[] brokers = [new("NATS", "/usr/sbin/nats-server", "nats-server"), new("Redis", "/usr/bin/redis-server", "redis-server")];
        var ready = MachineFacts.Parse("a", "dotnet=/usr/bin/dotnet\nsdks=8.0.404 10.0.100 \nuid=0\nprogram=/usr/sbin/nats-server\nprogram=/usr/bin/redis-server\n");
        Assert.AreEqual(("/usr/bin/dotnet", 2, true, 2), (ready.Dotnet, ready.Sdks.Count, ready.Root, ready.Programs.Count));
        Assert.IsEmpty(ready.Missing(brokers, needsRoot: true));
        var bare = MachineFacts.Parse("b", "dotnet=\nuid=1000\n");
        var missing = bare.Missing(brokers, needsRoot: true);
        Assert.HasCount(4, missing);
        StringAssert.Contains(missing[1], "apt-get install -y nats-server");
        var described = MachineFacts.Parse("d", "cpu= AMD EPYC\ncores=2\nmemory_kb=25165824\nos=Debian GNU/Linux 12 (bookworm) 6.1.0\n");
        Assert.AreEqual(("AMD EPYC", 2, 24L << 30, "Debian GNU/Linux 12 (bookworm) 6.1.0"), (described.Cpu, described.Cores, described.MemoryBytes, described.Os));
        Assert.IsNull(described.ClockOffsetMs);
        var old = MachineFacts.Parse("c", "dotnet=/usr/bin/dotnet\nsdks=8.0.404 \nuid=1000\n");
        StringAssert.Contains(old.Missing([], needsRoot: false).Single(), "8.0.404");
    }

    private static DeploySuite Deploy(TestSshServer ssh, string remoteFolder, FakeBuildEngine engine, string? config = null, params Microsoft.Build.Framework.ITaskItem[] requirements) => new()
    {
        BuildEngine = engine, ServerMachine = $"root@{ssh.Address}", SshConfig = config ?? ssh.ConfigFile, RemoteFolder = remoteFolder,
        Root = RepositoryPaths.Root, Configuration = HostingTests.Configuration, ServerRequirements = requirements,
    };

    [TestMethod]
    [TestCategory("Unit")]
    public void A_server_machines_place_moves_this_builds_paths_to_its_own_and_reads_a_server_there()
    {
        var place = new MachinePlace("root@10.0.0.1", null, "/a/logs/ssh.sock", "server", "/r/suite-1", "/r/run/artifacts/", "/a/", "root@10.0.0.1: …");
        Assert.AreEqual("Data Source=/r/run/artifacts/data/server.db", place.Map("Data Source=/a/data/server.db"));
        Assert.AreEqual("/r/run/artifacts/tls/server.key", place.RemotePath("/a/tls/server.key"));
        Assert.AreEqual(ErrorCodes.InvalidParameter, Assert.ThrowsExactly<IntegrationException>(() => place.RemotePath("/etc/passwd")).Code);
        // Its launch: ssh through the run's connection, a shell there that keeps the server's id and becomes its build.
        var launch = place.Launch("TcpServer2", "RunServer", "/r/run/artifacts/logs/TcpServer2.properties.rsp");
        Assert.AreEqual("ssh", launch.FileName);
        CollectionAssert.IsSubsetOf(new[] { "ControlPath=/a/logs/ssh.sock", "ControlMaster=no", "BatchMode=yes", "StrictHostKeyChecking=yes", "root@10.0.0.1", "--" }, launch.Arguments.ToArray());
        StringAssert.StartsWith(launch.Arguments[^1], "sh -c 'echo $$ > /r/run/artifacts/logs/TcpServer2.pid && cd /r/suite-1 && ");
        StringAssert.EndsWith(launch.Arguments[^1], "-t:RunServer -nologo -v:n -tl:off -nr:false -p:StopOnStdinClose=true -clp:NoSummary @/r/run/artifacts/logs/TcpServer2.properties.rsp'");

        var reading = RemoteServerReading.Parse("pid=4242\nticks=250\nhz=100\npeak_kb=2048\nstats={\"processId\":4242}\n")!;
        Assert.AreEqual((4242, 2.5, 2048L * 1024, "{\"processId\":4242}"), (reading.ProcessId, reading.CpuSeconds, reading.PeakBytes, reading.StatsJson));
        Assert.IsNull(RemoteServerReading.Parse("pid=4242\nticks=250\n"));
        Assert.IsNull(RemoteServerReading.Parse("pid=4242\nticks=1\nhz=100\npeak_kb=1\nstats=\n")!.StatsJson);
    }

    [TestMethod]
    [TestCategory("EndToEnd")]
    [System.Runtime.Versioning.UnsupportedOSPlatform("windows")]
    public async Task Deploy_sends_the_suite_once_owner_only_and_the_copy_runs_on_its_own()
    {
        using var folder = new TempDirectory("it-ssh-");
        using var ssh = TestSshServer.Start(Path.Combine(folder, "sshd"));
        var remote = Path.Combine(folder, "remote"); // the other machine's folder, apart from the checkout
        var engine = new FakeBuildEngine();
        var first = Deploy(ssh, remote, engine, requirements: new TaskItem("NATS", new Dictionary<string, string> { ["Program"] = "/usr/sbin/nats-server", ["Package"] = "nats-server" }));
        Assert.IsTrue(await Task.Run(first.Execute), engine.Log);
        var deployed = first.Deployed.Single().Split('=', 2)[1];
        StringAssert.StartsWith(deployed, Path.Combine(remote, "suite-"));
        Assert.IsTrue(File.Exists(Path.Combine(deployed, ".complete")) && File.Exists(Path.Combine(deployed, "build.proj")));
        Assert.AreEqual(UnixFileMode.UserRead | UnixFileMode.UserWrite | UnixFileMode.UserExecute, File.GetUnixFileMode(deployed));
        // Built tasks and targets, no sources, and no other system's native libraries.
        var files = Directory.GetFiles(deployed, "*", SearchOption.AllDirectories).Select(f => Path.GetRelativePath(deployed, f)).ToList();
        Assert.IsEmpty(files.Where(f => f.EndsWith(".cs", StringComparison.Ordinal) || f.Contains("/win-", StringComparison.Ordinal)).ToList());
        CollectionAssert.Contains(files, $"tasks/IntegrationTasks/bin/{HostingTests.Configuration}/net10.0/IntegrationTasks.dll");

        // The machine as the report will say it: here the same machine, so its clock agrees with this one's within the look's own time.
        var facts = await MachineFacts.OfAsync(ssh.Machine(), [], CancellationToken.None);
        Assert.AreEqual((int.Parse(RepositoryPaths.Run("nproc", []).Stdout.Trim(), System.Globalization.CultureInfo.InvariantCulture), true),
            (facts.Cores, facts.MemoryBytes > 0));
        Assert.IsTrue(Math.Abs(facts.ClockOffsetMs!.Value) <= facts.ClockUncertaintyMs!.Value + 5, facts.Describe());

        // Unchanged: left as it is, by the Deploy target as a user runs it (the brokers named checked there).
        var written = File.GetLastWriteTimeUtc(Path.Combine(deployed, ".complete"));
        var (exitCode, output) = HostingTests.RunBuild("Deploy", Path.Combine(folder, "artifacts"), $"-p:ServerMachine=root@{ssh.Address}",
            $"-p:SshConfig={ssh.ConfigFile}", $"-p:RemoteFolder={remote}", "-p:Brokers=NATS+Redis");
        Assert.AreEqual(0, exitCode, output);
        StringAssert.Contains(output, "Redis present");
        Assert.AreEqual(written, File.GetLastWriteTimeUtc(Path.Combine(deployed, ".complete")));
        Assert.HasCount(1, Directory.GetDirectories(remote));

        // The copy runs by itself over ssh: data generated there from its own tasks, and its fingerprint computed there is the one
        // of the same data set made here.
        var data = Path.Combine(folder, "remote-artifacts");
        var run = await ssh.Machine().RunAsync(["sh", "-c", $"cd {SshMachine.Quote(deployed)} && dotnet msbuild build.proj -t:GenerateData -nologo -v:m -p:SkipTasksBuild=true -p:IntegrationTasksFromSource=false -p:Configuration={HostingTests.Configuration} -p:Records=1000 -p:Fingerprint=true -p:ArtifactsDir={SshMachine.Quote(data + "/")}"],
            TimeSpan.FromMinutes(3), CancellationToken.None);
        Assert.AreEqual(0, run.ExitCode, run.Output + run.Errors);
        Assert.IsTrue(File.Exists(Path.Combine(data, "data", "server.db")), run.Output);
        using (var here = new TempDirectory("it-here-"))
        {
            var database = IntegrationTasks.Data.Database.Create("Sqlite", $"Data Source={Path.Combine(here, "server.db")}");
            await new IntegrationTasks.Data.DataGenerator(database, NullEventLog.Instance).GenerateAsync(1000, CancellationToken.None);
            StringAssert.Contains(run.Output, $"Data set: {await IntegrationTasks.Data.DataSetFingerprint.OfAsync(database, 1000, CancellationToken.None)}");
        }
    }

    [TestMethod]
    [TestCategory("EndToEnd")]
    public async Task A_server_started_over_ssh_stops_when_its_session_is_cut()
    {
        using var folder = new TempDirectory("it-ssh-");
        using var ssh = TestSshServer.Start(Path.Combine(folder, "sshd"));
        var engine = new FakeBuildEngine();
        var deploy = Deploy(ssh, Path.Combine(folder, "remote"), engine);
        Assert.IsTrue(await Task.Run(deploy.Execute), engine.Log);
        var deployed = deploy.Deployed.Single().Split('=', 2)[1];
        var port = TestPorts.Free();
        var artifacts = Path.Combine(folder, "remote-artifacts"); // on its command line: how its processes are found there
        // A server of the deployed copy, as a build on this side would start it there: told to stop when its input closes.
        var words = ssh.Machine().Command(["sh", "-c", $"cd {SshMachine.Quote(deployed)} && exec dotnet msbuild build.proj -t:TcpServer2 -nologo -v:m -p:SkipTasksBuild=true -p:IntegrationTasksFromSource=false -p:Configuration={HostingTests.Configuration} -p:Port={port} -p:StopOnStdinClose=true -p:ArtifactsDir={SshMachine.Quote(artifacts + "/")}"]);
        var info = new ProcessStartInfo(words[0]) { RedirectStandardInput = true, RedirectStandardOutput = true, RedirectStandardError = true, UseShellExecute = false };
        foreach (var word in words.Skip(1))
            info.ArgumentList.Add(word);
        using var session = Process.Start(info)!;
        try
        {
            // Both streams read to their end, so that a full pipe never stalls the session.
            session.ErrorDataReceived += (_, _) => { };
            session.BeginErrorReadLine();
            var readyLine = new TaskCompletionSource<bool>(TaskCreationOptions.RunContinuationsAsynchronously);
            _ = Task.Run(() =>
            {
                while (session.StandardOutput.ReadLine() is { } line)
                    if (line.Contains(ServerSignals.ReadyMarker, StringComparison.Ordinal))
                        readyLine.TrySetResult(true);
                readyLine.TrySetResult(false);
            });
            var ready = readyLine.Task;
            Assert.IsTrue(await ready.WaitAsync(TimeSpan.FromMinutes(2)), "the server over ssh said it was ready");
            Assert.IsTrue(Listening(port), "it listens");
            Assert.IsTrue(Processes.CommandLines().Any(c => c.Contains(artifacts, StringComparison.Ordinal) && !c.StartsWith("ssh ", StringComparison.Ordinal)),
                "its processes on the other side are found (besides the ssh client here)");
            // The session cut as a lost link or a killed build cuts it: nothing but sshd was told, and the server goes with it.
            session.Kill();
            await Eventually.WaitUntilAsync(() => !Listening(port) && !Processes.CommandLines().Any(c => c.Contains(artifacts, StringComparison.Ordinal)),
                "the server left with its session", TimeSpan.FromSeconds(30), () => Processes.AllCommandLines());
        }
        finally
        {
            if (!session.HasExited)
                session.Kill(); // a failed wait above: the session's end is what stops the server there
        }
    }

    private static bool Listening(int port)
    {
        try
        {
            IntegrationTasks.Hosting.Ports.EnsureFree("127.0.0.1", port);
            return false;
        }
        catch (IntegrationException)
        {
            return true;
        }
    }

    [TestMethod]
    [TestCategory("EndToEnd")]
    public async Task An_unknown_host_key_a_missing_broker_and_no_answer_are_refused_before_anything_is_sent()
    {
        using var folder = new TempDirectory("it-ssh-");
        using var ssh = TestSshServer.Start(Path.Combine(folder, "sshd"));
        var remote = Path.Combine(folder, "remote");

        var engine = new FakeBuildEngine();
        Assert.IsFalse(await Task.Run(Deploy(ssh, remote, engine, ssh.UnknownHostConfigFile).Execute));
        Assert.IsTrue(engine.HasErrorCode(ErrorCodes.RemoteHostKeyUnknown), engine.Log);

        engine = new FakeBuildEngine();
        var nothing = new TaskItem("Kafka", new Dictionary<string, string> { ["Program"] = "/usr/bin/no-such-broker", ["Package"] = "no-such-broker" });
        Assert.IsFalse(await Task.Run(Deploy(ssh, remote, engine, requirements: nothing).Execute));
        Assert.IsTrue(engine.HasErrorCode(ErrorCodes.RemotePrerequisiteMissing), engine.Log);
        StringAssert.Contains(engine.Errors.Single().Message, "apt-get install -y no-such-broker");

        engine = new FakeBuildEngine();
        File.WriteAllText(Path.Combine(folder, "closed_config"), $"Host 127.0.0.1\n  Port {TestPorts.Free()}\n  GlobalKnownHostsFile /dev/null\n  UserKnownHostsFile /dev/null\n");
        var unreachable = Deploy(ssh, remote, engine, Path.Combine(folder, "closed_config"));
        Assert.IsFalse(await Task.Run(unreachable.Execute));
        Assert.IsTrue(engine.HasErrorCode(ErrorCodes.RemoteUnreachable), engine.Log);
        Assert.IsFalse(Directory.Exists(remote), "nothing was sent");
    }
}
