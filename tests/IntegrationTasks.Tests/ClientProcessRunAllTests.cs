namespace IntegrationTasks.Tests;

/// <summary>RunAll with each client in a process of its own: whose process a run was, its figures, and a client process that dies.</summary>
[TestClass]
[TestCategory("EndToEnd")]
public sealed class ClientProcessRunAllTests
{
    [TestMethod]
    [Timeout(300_000, CooperativeCancellation = true)] // one small RunAll
    public void Each_transports_client_runs_in_a_process_of_its_own_that_has_exited_with_figures_of_its_own()
    {
        using var artifacts = new TempDirectory("it-client-process-");
        // 1 MiB rows: each batch holds one (BatchBytes), eight a run.
        var (exitCode, output) = HostingTests.RunBuild("RunAll", artifacts, $"-p:Port={TestPorts.Free()}", "-p:Transports=TcpClient2+PipelinedCopy",
            "-p:PayloadBytes=1048576", "-p:RecordCounts=8", "-p:Repetitions=2", "-p:WarmupRuns=1", "-p:Peers=false");
        Assert.AreEqual(0, exitCode, output);
        var runs = MeasurementLog.Read(Path.Combine(artifacts, "results", "runs.jsonl"));
        Assert.HasCount(6, runs);
        // By default a process a transport, kept for its runs (the warm-up first), ended with the build.
        var processes = runs.Select(r => r.ClientProcessId ?? 0).ToList();
        Assert.AreEqual(2, processes.Distinct().Count(), string.Join(", ", processes));
        foreach (var transport in runs.GroupBy(r => r.Transport))
            CollectionAssert.AreEqual(new[] { 0, 1, 2 }, transport.Select(r => r.ClientRunsBefore ?? -1).ToArray(), transport.Key);
        Assert.IsFalse(processes.Any(ClientProcesses.IsRunning), string.Join(", ", processes));
        foreach (var run in runs)
        {
            Assert.AreEqual((true, "Transport", 8, 1_048_576), (run.Verified, run.ClientProcess, run.Records, run.PayloadBytes), run.ToString());
            Assert.IsGreaterThanOrEqualTo(8L * 1_048_576, run.ClientAllocatedBytes, run.ToString());
            Assert.IsGreaterThan(8L * 1_048_576, run.ClientPeakBytes, run.ToString());
            Assert.IsGreaterThan(0.0, run.ClientCpuUserSeconds ?? 0, run.ToString());
            Assert.IsGreaterThanOrEqualTo(0.0, run.ClientCpuSystemSeconds ?? -1, run.ToString());
            Assert.IsGreaterThan(1, run.ClientMaxThreads ?? 0, run.ToString());
            Assert.AreEqual(run.ClientRunsBefore == 0, run.ClientStartSeconds is > 0, run.ToString());
            Assert.HasCount(3, run.ClientGcCollections ?? []);
            Assert.IsNull(run.ClientWarmupSeconds);
        }
        // The same figures in results.csv, by column.
        var csv = File.ReadAllLines(Path.Combine(artifacts, "results", "results.csv"));
        var header = csv[0].Split(',');
        var rows = csv.Skip(1).Select(l => l.Split(',')).Where(r => r[0] == "TcpClient2").ToList();
        Assert.HasCount(3, rows);
        foreach (var row in rows)
        {
            Assert.AreEqual("Transport", row[Array.IndexOf(header, "clientProcess")]);
            Assert.Contains(int.Parse(row[Array.IndexOf(header, "clientProcessId")], System.Globalization.CultureInfo.InvariantCulture), processes);
            Assert.IsGreaterThanOrEqualTo(8L * 1_048_576, long.Parse(row[Array.IndexOf(header, "clientAllocatedBytes")], System.Globalization.CultureInfo.InvariantCulture));
        }
        HostingTests.AssertEndedCleanly(artifacts);
    }

    [TestMethod]
    [Timeout(400_000, CooperativeCancellation = true)] // three small RunAlls
    public void A_fresh_client_has_a_process_a_run_a_warmed_one_its_warm_up_first_and_one_in_the_build_shares_its_process()
    {
        using var artifacts = new TempDirectory("it-client-warmed-");
        var (exitCode, output) = SmallRunAll.Run(artifacts, $"-p:Port={TestPorts.Free()}", "-p:Repetitions=2", "-p:ClientProcess=Fresh");
        Assert.AreEqual(0, exitCode, output);
        var fresh = MeasurementLog.Read(Path.Combine(artifacts, "results", "runs.jsonl"));
        Assert.IsTrue(fresh.All(r => r is { Verified: true, ClientProcess: "Fresh", ClientRunsBefore: 0, ClientStartSeconds: > 0, ClientWarmupSeconds: null }), string.Join("\n", fresh));
        Assert.HasCount(fresh.Count, fresh.Select(r => r.ClientProcessId).Distinct());

        (exitCode, output) = SmallRunAll.Run(artifacts, $"-p:Port={TestPorts.Free()}", "-p:Repetitions=2", "-p:ClientProcess=Warmed");
        Assert.AreEqual(0, exitCode, output);
        var warmed = MeasurementLog.Read(Path.Combine(artifacts, "results", "runs.jsonl"));
        Assert.IsTrue(warmed.All(r => r is { Verified: true, ClientProcess: "Warmed", ClientWarmupSeconds: > 0 }), string.Join("\n", warmed));
        Assert.HasCount(warmed.Count, warmed.Select(r => r.ClientProcessId).Distinct());

        (exitCode, output) = SmallRunAll.Run(artifacts, $"-p:Port={TestPorts.Free()}", "-p:Repetitions=2", "-p:ClientProcess=Build");
        Assert.AreEqual(0, exitCode, output);
        var inBuild = MeasurementLog.Read(Path.Combine(artifacts, "results", "runs.jsonl"));
        Assert.IsTrue(inBuild.All(r => r is { Verified: true, ClientProcess: "Build", ClientStartSeconds: null }), string.Join("\n", inBuild));
        Assert.HasCount(1, inBuild.Select(r => r.ClientProcessId).Distinct(), "every run in the build's one process");
        HostingTests.AssertEndedCleanly(artifacts);
    }

    [TestMethod]
    [Timeout(300_000, CooperativeCancellation = true)]
    public async Task A_client_process_killed_mid_run_fails_that_run_with_IT4016_and_the_RunAll_goes_on()
    {
        using var artifacts = new TempDirectory("it-client-killed-");
        var killed = 0;
        using var stop = new CancellationTokenSource();
        // The first client process seen is killed outright, as the kernel's out-of-memory killer would.
        var killer = Task.Run(async () =>
        {
            while (!stop.IsCancellationRequested)
            {
                if (ClientProcesses.Of(artifacts).FirstOrDefault() is > 0 and var pid)
                {
                    using (var kill = System.Diagnostics.Process.Start("kill", ["-KILL", pid.ToString(System.Globalization.CultureInfo.InvariantCulture)]))
                        await kill.WaitForExitAsync();
                    killed = pid;
                    return;
                }
                await Task.Delay(5, CancellationToken.None);
            }
        });
        var (exitCode, output) = HostingTests.RunBuild("RunAll", artifacts, $"-p:Port={TestPorts.Free()}", "-p:Transports=TcpClient2+PipelinedCopy",
            "-p:RecordCounts=50000", "-p:Repetitions=3", "-p:Warmup=false", "-p:Peers=false");
        await stop.CancelAsync();
        await killer;
        Assert.AreNotEqual(0, killed, output);
        Assert.AreNotEqual(0, exitCode, output);
        using var json = System.Text.Json.JsonDocument.Parse(File.ReadAllText(Path.Combine(artifacts, "results", "results.json")));
        var failed = json.RootElement.GetProperty("failed").EnumerateArray().Single();
        Assert.AreEqual((ErrorCodes.ClientProcessFailed, 50_000), (failed.GetProperty("code").GetString(), failed.GetProperty("records").GetInt32()), output);
        var runs = MeasurementLog.Read(Path.Combine(artifacts, "results", "runs.jsonl"));
        Assert.HasCount(5, runs, "the other runs went on");
        Assert.IsTrue(runs.All(r => r.Verified && r.ClientProcessId != killed), string.Join("\n", runs));
        HostingTests.AssertEndedCleanly(artifacts);
    }
}
