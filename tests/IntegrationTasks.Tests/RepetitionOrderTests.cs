namespace IntegrationTasks.Tests;

/// <summary>RunAll's repetitions interleaved across transports (round r of every transport before r+1 of any), or by transport.</summary>
[TestClass]
[TestCategory("EndToEnd")]
public sealed class RepetitionOrderTests
{
    [TestMethod]
    public void RunAll_with_ReferenceEvery_runs_the_reference_between_the_others_and_pairs_each_run_with_the_nearest()
    {
        // Each run measured against PipelinedCopy is followed by one of it (an extra one, or the round's own when that comes next anyway):
        // MSBuild must run the extra runs, not take them for the round's own (same transport, round and size) and skip them as built.
        using var artifacts = new TempDirectory("it-rounds-");
        var (exitCode, output) = SmallRunAll.Run(artifacts, "-p:ShuffleSeed=3", "-p:ReferenceEvery=1", "-p:Repetitions=3");
        Assert.AreEqual(0, exitCode, output);
        StringAssert.Contains(output, "the reference (PipelinedCopy) also runs after every 1 runs");
        var runs = MeasurementLog.Read(Path.Combine(artifacts, "results", "runs.jsonl"));
        var measured = runs.Where(r => !r.Warmup).ToList();
        Assert.IsTrue(runs.All(r => r is { Verified: true, RoundSeed: 3 }), string.Join("\n", runs));
        Assert.IsTrue(runs.All(r => r.HostStealSeconds >= 0), "each run records the hypervisor's steal (Linux)");
        Assert.AreEqual(3, measured.Count(r => r.Transport == "TcpClient2"));
        Assert.AreEqual(4, measured.Count(r => r.Transport == "PipelinedCopy"), string.Join("\n", measured.Select(r => $"{r.Transport} {r.Repetition}")));
        // Every TcpClient2 run has a PipelinedCopy run right after it.
        for (var i = 0; i < measured.Count; i++)
            if (measured[i].Transport == "TcpClient2")
                Assert.AreEqual("PipelinedCopy", measured[i + 1].Transport);
        StringAssert.Contains(output, "RunAll round 3 of 3, run 1 of ");
        var results = ResultsJson.Load(Path.Combine(artifacts, "results"));
        var order = results.Environment["Repetition order"];
        StringAssert.Contains(order, "(seed 3)");
        StringAssert.Contains(order, "(4 runs against 3 rounds, ReferenceEvery)");
        Assert.IsTrue(results.Row("TcpClient2").PairedRatioToPipelined is { Count: 3, Mean: > 0, HasInterval: true }, results.Row("TcpClient2").ToString());
        HostingTests.AssertEndedCleanly(artifacts);
    }

    [TestMethod]
    public void RunAll_interleaves_the_rounds_with_each_server_started_once_and_runs_by_transport_when_asked()
    {
        using var artifacts = new TempDirectory("it-rounds-");
        var (exitCode, output) = HostingTests.RunBuild("RunAll", artifacts, "-p:ShuffleSeed=7", "-p:NoiseDiagnostics=true", "-p:Calibrate=true",
            "-p:Transports=TcpClient2+TcpClientMultiThreadTest3+PipelinedCopy", "-p:RecordCounts=2000", "-p:Repetitions=3", "-p:BatchSize=200", "-p:Peers=false");
        Assert.AreEqual(0, exitCode, output);
        var runs = MeasurementLog.Read(Path.Combine(artifacts, "results", "runs.jsonl"));
        Assert.HasCount(18, runs); // three warm-ups each (WarmupRuns' default), three rounds
        Assert.IsTrue(runs.All(r => r is { Verified: true, RoundSeed: 7 }), string.Join("\n", runs));
        Assert.IsTrue(runs.Take(9).All(r => r.Warmup));
        Assert.IsTrue(runs.All(r => r.ClientJitMethods is not null && r.ClientJitSeconds is not null), string.Join("\n", runs));
        Assert.IsTrue(runs.All(r => r is { ClientGcPauseSeconds: >= 0, ClientGcCollections.Length: 3 }), string.Join("\n", runs));
        Assert.IsGreaterThan(0L, runs.Take(9).Sum(r => r.ClientJitMethods!.Value), "the warm-ups compile");
        foreach (var round in runs.Skip(9).Chunk(3))
            CollectionAssert.AreEquivalent(new[] { "TcpClient2", "TcpClientMultiThreadTest3", "PipelinedCopy" }, round.Select(r => r.Transport).ToArray());
        Assert.AreEqual(3, runs.Skip(9).Select(r => r.Repetition).Distinct().Count());
        // Each server once for all the rounds, each on its own port; the server's CPU is read per run all the same, over the client's
        // transfer (so the first run of a server has it too, and none takes in the rounds the server waited through).
        foreach (var server in new[] { "TcpServer2", "TcpTestServer3" })
            Assert.AreEqual(1, output.Split('\n').Count(l => l.Contains($"{server} is ready at", StringComparison.Ordinal)), output);
        var served = runs.Where(r => r.Transport is "TcpClient2" or "TcpClientMultiThreadTest3").ToList();
        Assert.IsTrue(served.All(r => r.ServerCpuSeconds is not null), string.Join("\n", runs));
        Assert.IsGreaterThan(0.0, served.Sum(r => r.ServerCpuSeconds!.Value), "the servers worked during the transfers");
        StringAssert.Contains(output, "RunAll round 3 of 3, run 3 of 3: ");
        var results = ResultsJson.Load(Path.Combine(artifacts, "results"));
        StringAssert.StartsWith(results.Environment["Repetition order"], "interleaved: ");
        StringAssert.EndsWith(results.Environment["Repetition order"], "(seed 7)");
        // The reference is as parallel as the most parallel transport (MaxInFlight 8, the web services' 8 connections), and says so.
        StringAssert.StartsWith(results.Environment["Note (reference)"], "PipelinedCopy read on 8 connections");
        // Each row's encoding, from its transport's definition.
        Assert.AreEqual(("XML", null), (results.Row("TcpClient2").Encoding, results.Row("PipelinedCopy").Encoding));
        // Each transport's ratio to PipelinedCopy's run nearest in time, over the three rounds.
        Assert.IsTrue(results.Row("TcpClient2").PairedRatioToPipelined is { Count: 3, Mean: > 0, HasInterval: true }, results.Row("TcpClient2").ToString());
        // The machine's noise: the four loops before the first run and after the last, in the log, the readings and the report.
        StringAssert.Contains(output, "Machine noise before the runs: CPU loop ");
        StringAssert.Contains(output, "Machine noise after the runs: CPU loop ");
        var readings = MachineNoise.Read(Path.Combine(artifacts, "results", "state", "calibration.jsonl"));
        string[] loops = [MachineNoise.Cpu, MachineNoise.Memory, MachineNoise.DatabaseLoop, MachineNoise.WriteLoop];
        CollectionAssert.AreEqual(new[] { "Before", "After" }.SelectMany(phase => loops.Select(loop => $"{phase}/{loop}")).ToArray(),
            readings.Select(r => $"{r.Phase}/{r.Loop}").ToArray());
        Assert.IsTrue(readings.All(r => r is { Chunks: >= 10, MeanMs: > 0 }), string.Join("\n", readings));
        Assert.AreEqual(("After", "After"), (results.Noise.Last(n => n.Loop == MachineNoise.DatabaseLoop).Phase, results.Noise.Last(n => n.Loop == MachineNoise.WriteLoop).Phase));
        Assert.IsTrue(readings.Where(r => r.Loop is MachineNoise.DatabaseLoop or MachineNoise.WriteLoop).All(r => r.Provider == "Sqlite"), "the databases' loops say which");
        StringAssert.Contains(File.ReadAllText(Path.Combine(artifacts, "results", "results.md")), "The client's JIT compiled for ");
        HostingTests.AssertEndedCleanly(artifacts);

        using var byTransport = new TempDirectory("it-rounds-");
        (exitCode, output) = HostingTests.RunBuild("RunAll", byTransport, "-p:RepetitionOrder=ByTransport",
            "-p:Transports=TcpClient2+PipelinedCopy", "-p:RecordCounts=2000", "-p:Repetitions=2", "-p:BatchSize=200", "-p:Peers=false", "-p:Calibrate=false",
            "-p:ReferenceReaders=2", "-p:WarmupRuns=2");
        Assert.AreEqual(0, exitCode, output);
        runs = MeasurementLog.Read(Path.Combine(byTransport, "results", "runs.jsonl"));
        CollectionAssert.AreEqual(new[] { "PipelinedCopy", "PipelinedCopy", "PipelinedCopy", "PipelinedCopy", "TcpClient2", "TcpClient2", "TcpClient2", "TcpClient2" },
            runs.Select(r => r.Transport).ToArray());
        CollectionAssert.AreEqual(new[] { true, true, false, false }, runs.Take(4).Select(r => r.Warmup).ToArray(), "two warm-ups, each run");
        Assert.IsTrue(runs.All(r => r.RoundSeed is null));
        results = ResultsJson.Load(Path.Combine(byTransport, "results"));
        StringAssert.StartsWith(results.Environment["Repetition order"], "by transport: ");
        StringAssert.StartsWith(results.Environment["Warmup"], "2 run(s)");
        Assert.AreEqual((2, 2), (results.Row("TcpClient2").Seconds.Count, results.Row("TcpClient2").WarmupRuns));
        Assert.IsNull(results.Row("TcpClient2").PairedRatioToPipelined, "by transport, no run of the reference is paired with one of TcpClient2");
        Assert.IsEmpty(results.Noise, "-p:Calibrate=false: no calibration");
        StringAssert.StartsWith(results.Environment["Note (reference)"], "PipelinedCopy read on 2 connections");

        (exitCode, output) = HostingTests.RunBuild("RunAll", byTransport, "-p:RepetitionOrder=Sometimes", "-p:Transports=PipelinedCopy", "-p:RecordCounts=2000");
        Assert.AreNotEqual(0, exitCode);
        StringAssert.Contains(output, "error IT1001: RepetitionOrder must be");
        StringAssert.Contains(output, "(was 'Sometimes')");
    }
}
