using IntegrationTasks.Common;
using IntegrationTasks.Results;
using IntegrationTasks.Transfer;
using Microsoft.Build.Framework;
using TaskItem = Microsoft.Build.Utilities.TaskItem;

namespace IntegrationTasks.Tests;

/// <summary>RunAll's repetitions interleaved across transports (round r of every transport before r+1 of any), or by transport.</summary>
[TestClass]
[TestCategory("EndToEnd")]
[DoNotParallelize]
public sealed class RepetitionOrderTests
{
    private static TaskItem Transport(string name, string server, string portProperty = "", string port = "0", string recordCounts = "1000")
    {
        var item = new TaskItem(name);
        item.SetMetadata("RecordCounts", recordCounts);
        item.SetMetadata("ServerTarget", server);
        item.SetMetadata("PortProperty", portProperty);
        item.SetMetadata("ServerPort", port);
        return item;
    }

    private static PlanRounds Plan(string seed, FakeBuildEngine engine) => new()
    {
        BuildEngine = engine, BatchSize = 500, Repetitions = 4, Seed = seed, ClientCounts = ["1+2"],
        Transports =
        [
            Transport("PipelinedCopy", ""), Transport("TcpClient2", "TcpServer2", "Port", "8081"),
            Transport("TcpClientMultiThreadTest3", "TcpTestServer3", "Port", "8081"), Transport("GrpcClient", "GrpcServer", "GrpcPort", "8085"),
            Transport("GrpcStreaming", "GrpcServer", "GrpcPort", "8085"),
        ],
    };

    private static Dictionary<string, string> Properties(ITaskItem item) =>
        item.GetMetadata("AdditionalProperties").Split(';').Select(p => p.Split('=', 2)).ToDictionary(p => p[0], p => p[1]);

    [TestMethod]
    [TestCategory("Unit")]
    public void Rounds_run_every_transport_once_each_in_a_seeded_shuffle_after_all_the_warm_ups()
    {
        var engine = new FakeBuildEngine();
        var plan = Plan("7", engine);
        Assert.IsTrue(plan.Execute(), engine.Log);
        Assert.AreEqual(7, plan.SeedUsed);
        var runs = plan.Runs.Select(Properties).ToList();
        Assert.HasCount(5 * 2 * 5, runs); // transports × client counts × (warm-up + 4)
        // The warm-ups first, in the order listed; then round 1, 2, 3, 4, each with every transport and client count once.
        var warmups = runs.TakeWhile(r => r["Round"] == "0").ToList();
        Assert.HasCount(10, warmups);
        CollectionAssert.AreEqual(new[] { "PipelinedCopy", "PipelinedCopy", "TcpClient2", "TcpClient2" }, warmups.Take(4).Select(r => r["Transport"]).ToArray());
        Assert.IsTrue(warmups.All(r => r["Repetition"] == "0"));
        var rounds = runs.Skip(10).Chunk(10).ToList();
        Assert.HasCount(4, rounds);
        for (var round = 1; round <= 4; round++)
        {
            var inRound = rounds[round - 1];
            Assert.IsTrue(inRound.All(r => r["Round"] == $"{round}" && r["Repetition"] == $"{round}"), $"round {round}");
            CollectionAssert.AreEquivalent(warmups.Select(r => $"{r["Transport"]}/{r["Clients"]}").ToArray(),
                inRound.Select(r => $"{r["Transport"]}/{r["Clients"]}").ToArray(), $"round {round}");
            Assert.AreEqual("10 of 10", inRound[^1]["RoundPosition"]);
        }
        // Shuffled: the rounds are not all in one order; the same seed gives the same order, another seed another.
        Assert.IsGreaterThan(1, rounds.Select(r => string.Join(",", r.Select(p => $"{p["Transport"]}/{p["Clients"]}"))).Distinct().Count());
        var again = Plan("7", engine);
        Assert.IsTrue(again.Execute(), engine.Log);
        CollectionAssert.AreEqual(plan.Runs.Select(r => r.ItemSpec).ToArray(), again.Runs.Select(r => r.ItemSpec).ToArray());
        var other = Plan("8", engine);
        Assert.IsTrue(other.Execute(), engine.Log);
        CollectionAssert.AreNotEqual(plan.Runs.Select(r => r.ItemSpec).ToArray(), other.Runs.Select(r => r.ItemSpec).ToArray());
        // No seed given: one is drawn, and reported.
        var drawn = Plan("", engine);
        Assert.IsTrue(drawn.Execute(), engine.Log);
        Assert.IsGreaterThan(0, drawn.SeedUsed);

        Assert.IsFalse(Plan("soon", engine).Execute());
        Assert.IsTrue(engine.HasErrorCode(ErrorCodes.InvalidParameter));
    }

    /// <summary>
    /// Each transport's warm-ups back to back left the JIT recompiling in round 1 (a large share of a SOAP run): it holds
    /// back while new code keeps coming, and every transport's first run brings new code. So the first warm-up of every transport comes
    /// before the second of any.
    /// </summary>
    [TestMethod]
    [TestCategory("Unit")]
    public void Several_warm_ups_go_in_warm_up_rounds_the_first_of_every_transport_before_the_second_of_any()
    {
        var engine = new FakeBuildEngine();
        var plan = Plan("7", engine);
        plan.WarmupRuns = 2;
        plan.ClientCounts = ["1"];
        Assert.IsTrue(plan.Execute(), engine.Log);
        var warmups = plan.Runs.Select(Properties).TakeWhile(r => r["Round"] == "0").ToList();
        string[] listed = ["PipelinedCopy", "TcpClient2", "TcpClientMultiThreadTest3", "GrpcClient", "GrpcStreaming"];
        CollectionAssert.AreEqual(listed.Select(t => $"{t}/1").Concat(listed.Select(t => $"{t}/2")).ToArray(),
            warmups.Select(r => $"{r["Transport"]}/{r["WarmupRun"]}").ToArray());
        Assert.IsTrue(warmups.All(r => r["Repetition"] == "0"));
        Assert.AreEqual(5 * 2 + 5 * 4, plan.Runs.Length);
    }

    [TestMethod]
    [TestCategory("Unit")]
    public void With_ReferenceEvery_the_reference_also_runs_after_every_so_many_runs_measured_against_it()
    {
        var engine = new FakeBuildEngine();
        var transports = new[] { "PipelinedCopy", "PipelinedCopyRange", "TcpClient2", "GrpcClient", "RestJson", "WebSocketClient", "FileTransferRequest", "Peer" }.Select(name =>
        {
            var item = Transport(name, "");
            if (name.StartsWith("PipelinedCopy", StringComparison.Ordinal))
                item.SetMetadata("Reference", "true");
            if (name is "PipelinedCopyRange" or "FileTransferRequest")
                item.SetMetadata("ServerWork", "Range");
            if (name == "Peer")
            {
                item.SetMetadata("Peer", "true");
                item.SetMetadata("OneClient", "true");
            }
            return item;
        }).ToArray();
        var plan = new PlanRounds { BuildEngine = engine, BatchSize = 500, Repetitions = 6, Seed = "5", ClientCounts = ["1+2"], Transports = transports, ReferenceEvery = 2 };
        Assert.IsTrue(plan.Execute(), engine.Log);
        var measured = plan.Runs.Select(Properties).Where(r => r["Round"] != "0").ToList();
        // Walking the runs at one client count in order: never more than two runs measured against PipelinedCopy (the four others) without
        // a run of it between, nor two against PipelinedCopyRange (FileTransferRequest, whose server reads ranges) without one of that.
        foreach (var clients in new[] { "1", "2" })
            foreach (var (reference, measuredAgainst) in new[] { ("PipelinedCopy", new[] { "TcpClient2", "GrpcClient", "RestJson", "WebSocketClient" }), ("PipelinedCopyRange", new[] { "FileTransferRequest" }) })
            {
                var since = 0;
                foreach (var run in measured.Where(r => r["Clients"] == clients))
                {
                    if (run["Transport"] == reference)
                        since = 0;
                    else if (measuredAgainst.Contains(run["Transport"]) && ++since > 2)
                        Assert.Fail($"{run["Transport"]} at {clients} clients is the third run since {reference} ran (round {run["Round"]}, {run["RoundPosition"]}).");
                }
            }
        // Four runs a round against PipelinedCopy at one client, one of its own: extras, at most one for every two of those 24 runs.
        var pipelined = measured.Count(r => r["Transport"] == "PipelinedCopy" && r["Clients"] == "1");
        Assert.IsTrue(pipelined is > 6 and <= 6 + 24 / 2, $"{pipelined} runs of PipelinedCopy");
        // The peer runs one client only and is measured against nothing; every transport but the references runs once a round.
        Assert.IsTrue(new[] { "TcpClient2", "GrpcClient", "RestJson", "WebSocketClient", "FileTransferRequest" }
            .All(t => measured.Count(r => r["Transport"] == t && r["Clients"] == "1") == 6 && measured.Count(r => r["Transport"] == t && r["Clients"] == "2") == 6));
        Assert.AreEqual(6, measured.Count(r => r["Transport"] == "Peer"));
        // Never an extra run right before the round's own: within a round no reference runs twice in a row at one client count.
        foreach (var round in measured.GroupBy(r => r["Round"]))
            foreach (var (a, b) in round.Zip(round.Skip(1)))
                Assert.IsFalse(a["Transport"] == b["Transport"] && a["Clients"] == b["Clients"], $"{a["Transport"]} twice in a row in round {round.Key}");
        // An extra run is its round's run of the reference: same round and repetition; its place in the round tells it from the other,
        // so MSBuild runs both rather than taking one for the other; the positions count them.
        foreach (var round in measured.GroupBy(r => r["Round"]))
        {
            var inRound = round.ToList();
            Assert.IsTrue(inRound.All(r => r["Repetition"] == round.Key));
            CollectionAssert.AllItemsAreUnique(inRound.Select(r => r["RoundPosition"]).ToArray());
            Assert.AreEqual($"{inRound.Count} of {inRound.Count}", inRound[^1]["RoundPosition"]);
        }
        // Without it: once a round at each client count, as before.
        plan.ReferenceEvery = 0;
        Assert.IsTrue(plan.Execute(), engine.Log);
        Assert.AreEqual(6 * 2, plan.Runs.Select(Properties).Count(r => r["Round"] != "0" && r["Transport"] == "PipelinedCopy"));
        plan.ReferenceEvery = -1;
        Assert.IsFalse(plan.Execute());
        Assert.IsTrue(engine.HasErrorCode(ErrorCodes.InvalidParameter));
    }

    [TestMethod]
    [TestCategory("Unit")]
    public void Each_server_is_started_once_and_servers_that_read_one_port_property_get_ports_of_their_own()
    {
        var engine = new FakeBuildEngine();
        var plan = Plan("1", engine);
        Assert.IsTrue(plan.Execute(), engine.Log);
        var servers = plan.Servers.ToDictionary(s => s.ItemSpec, Properties);
        CollectionAssert.AreEquivalent(new[] { "TcpServer2", "TcpTestServer3", "GrpcServer" }, servers.Keys.ToArray());
        Assert.AreEqual("8081", servers["TcpServer2"]["Port"], "the first keeps the configured port");
        Assert.AreNotEqual("8081", servers["TcpTestServer3"]["Port"], "TCP 3 reads Port too: it gets another");
        Assert.AreEqual("8085", servers["GrpcServer"]["GrpcPort"]);
        // Every run talks to its own server's port; both gRPC transports to the one gRPC server.
        foreach (var run in plan.Runs.Select(Properties))
        {
            switch (run["Transport"])
            {
                case "TcpClient2": Assert.AreEqual(servers["TcpServer2"]["Port"], run["Port"]); break;
                case "TcpClientMultiThreadTest3": Assert.AreEqual(servers["TcpTestServer3"]["Port"], run["Port"]); break;
                case "GrpcClient" or "GrpcStreaming": Assert.AreEqual("8085", run["GrpcPort"]); break;
                default: Assert.IsFalse(run.ContainsKey("Port")); break;
            }
        }
    }

    [TestMethod]
    [TestCategory("Unit")]
    public void A_transport_capped_below_every_record_count_has_no_run_and_its_server_is_not_started()
    {
        // As CapRecordCounts leaves SoapSmallRequests at 200,000 records: no counts left. It failed the whole plan ("RecordCounts is empty").
        var engine = new FakeBuildEngine();
        var plan = new PlanRounds
        {
            BuildEngine = engine, BatchSize = 500, Repetitions = 2, Seed = "3",
            Transports = [Transport("SoapSmallRequests", "SoapServer", "SoapPort", "8083", recordCounts: ""), Transport("TcpClient2", "TcpServer2", "Port", "8081")],
        };
        Assert.IsTrue(plan.Execute(), engine.Log);
        Assert.IsTrue(plan.Runs.All(r => r.GetMetadata("Transport") == "TcpClient2") && plan.Runs.Length == 3);
        CollectionAssert.AreEqual(new[] { "TcpServer2" }, plan.Servers.Select(s => s.ItemSpec).ToArray());
    }

    [TestMethod]
    [TestCategory("Unit")]
    public void The_line_before_an_interleaved_run_says_its_round_its_place_and_the_time_left()
    {
        Assert.AreEqual("RunAll round 2 of 5, run 3 of 7: TcpClient2, 20,000 records; 1 min 40 s elapsed, about 3 min 20 s left.",
            RunProgressEstimate.DescribeRun("round 2 of 5", "3 of 7", "TcpClient2", 20_000, TimeSpan.FromSeconds(200), TimeSpan.FromSeconds(100)));
    }

    [TestMethod]
    public void RunAll_with_ReferenceEvery_runs_the_reference_between_the_others_and_pairs_each_run_with_the_nearest()
    {
        // Each run measured against PipelinedCopy is followed by one of it (an extra one, or the round's own when that comes next anyway):
        // MSBuild must run the extra runs, not take them for the round's own (same transport, round and size) and skip them as built.
        using var artifacts = new TempDirectory("it-rounds-");
        var (exitCode, output) = HostingTests.RunBuild("RunAll", artifacts, $"-p:Port={TestPorts.Free()}", "-p:ShuffleSeed=3", "-p:ReferenceEvery=1",
            "-p:Transports=TcpClient2+PipelinedCopy", "-p:RecordCounts=2000", "-p:Repetitions=3", "-p:BatchSize=200", "-p:Peers=false", "-p:Calibrate=false",
            "-p:WarmupRuns=1", "-p:ReferenceReaders=2");
        Assert.AreEqual(0, exitCode, output);
        StringAssert.Contains(output, "RunAll: the reference (PipelinedCopy) also runs after every 1 runs measured against it (ReferenceEvery)");
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
        var markdown = File.ReadAllText(Path.Combine(artifacts, "results", "results.md"));
        StringAssert.Contains(markdown, "(seed 3); PipelinedCopy also ran between the rounds' other runs (4 runs against 3 rounds, ReferenceEvery), and each run's paired ratio is to its run nearest in time");
        StringAssert.Matches(MarkdownTable.With(markdown, "Paired × PipelinedCopy (±95% CI)").Row("TcpClient2")["Paired × PipelinedCopy (±95% CI)"],
            new System.Text.RegularExpressions.Regex(@"^\d+\.\d\d ±\d+\.\d\d$"));
        HostingTests.AssertNoProcessMentions(artifacts);
    }

    [TestMethod]
    public void RunAll_interleaves_the_rounds_with_each_server_started_once_and_runs_by_transport_when_asked()
    {
        using var artifacts = new TempDirectory("it-rounds-");
        var (exitCode, output) = HostingTests.RunBuild("RunAll", artifacts, $"-p:Port={TestPorts.Free()}", "-p:ShuffleSeed=7",
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
        var markdown = File.ReadAllText(Path.Combine(artifacts, "results", "results.md"));
        StringAssert.Contains(markdown, "- Repetition order: interleaved: round r of every transport before round r+1 of any, each round's order shuffled (seed 7)");
        // The reference is as parallel as the most parallel transport (MaxInFlight 8, the web services' 8 connections), and says so.
        StringAssert.Contains(markdown, "- Note (reference): PipelinedCopy read on 8 connections (ReferenceReaders;");
        // Each row's encoding, from its transport's definition.
        var main = MarkdownTable.With(markdown, "Encoding");
        Assert.AreEqual(("XML", "–"), (main.Cell("TcpClient2", "Encoding"), main.Cell("PipelinedCopy", "Encoding")));
        // Each transport's ratio to PipelinedCopy's run nearest in time, over the three rounds.
        StringAssert.Matches(MarkdownTable.With(markdown, "Paired × PipelinedCopy (±95% CI)").Row("TcpClient2")["Paired × PipelinedCopy (±95% CI)"],
            new System.Text.RegularExpressions.Regex(@"^\d+\.\d\d ±\d+\.\d\d$"));
        // The machine's noise: the four loops before the first run and after the last, in the log, the readings and the report.
        StringAssert.Contains(output, "Machine noise before the runs: CPU loop ");
        StringAssert.Contains(output, "Machine noise after the runs: CPU loop ");
        var readings = MachineNoise.Read(Path.Combine(artifacts, "results", "calibration.jsonl"));
        string[] loops = [MachineNoise.Cpu, MachineNoise.Memory, MachineNoise.DatabaseLoop, MachineNoise.WriteLoop];
        CollectionAssert.AreEqual(new[] { "Before", "After" }.SelectMany(phase => loops.Select(loop => $"{phase}/{loop}")).ToArray(),
            readings.Select(r => $"{r.Phase}/{r.Loop}").ToArray());
        Assert.IsTrue(readings.All(r => r is { Chunks: >= 10, MeanMs: > 0 }), string.Join("\n", readings));
        Assert.AreEqual("after the runs", MarkdownTable.After(markdown, "## The machine's noise").RowsNamed(MachineNoise.DatabaseLoop).Last()["When"]);
        Assert.AreEqual("after the runs", MarkdownTable.After(markdown, "## The machine's noise").RowsNamed(MachineNoise.WriteLoop).Last()["When"]);
        Assert.IsTrue(readings.Where(r => r.Loop is MachineNoise.DatabaseLoop or MachineNoise.WriteLoop).All(r => r.Provider == "Sqlite"), "the databases' loops say which");
        StringAssert.Contains(markdown, "The client's JIT compiled for ");
        HostingTests.AssertNoProcessMentions(artifacts);

        using var byTransport = new TempDirectory("it-rounds-");
        (exitCode, output) = HostingTests.RunBuild("RunAll", byTransport, $"-p:Port={TestPorts.Free()}", "-p:RepetitionOrder=ByTransport",
            "-p:Transports=TcpClient2+PipelinedCopy", "-p:RecordCounts=2000", "-p:Repetitions=2", "-p:BatchSize=200", "-p:Peers=false", "-p:Calibrate=false",
            "-p:ReferenceReaders=2", "-p:WarmupRuns=2");
        Assert.AreEqual(0, exitCode, output);
        runs = MeasurementLog.Read(Path.Combine(byTransport, "results", "runs.jsonl"));
        CollectionAssert.AreEqual(new[] { "PipelinedCopy", "PipelinedCopy", "PipelinedCopy", "PipelinedCopy", "TcpClient2", "TcpClient2", "TcpClient2", "TcpClient2" },
            runs.Select(r => r.Transport).ToArray());
        CollectionAssert.AreEqual(new[] { true, true, false, false }, runs.Take(4).Select(r => r.Warmup).ToArray(), "two warm-ups, each run");
        Assert.IsTrue(runs.All(r => r.RoundSeed is null));
        markdown = File.ReadAllText(Path.Combine(byTransport, "results", "results.md"));
        StringAssert.Contains(markdown, "- Repetition order: by transport: every repetition of one transport, then the next");
        StringAssert.Contains(markdown, "- Warmup: 2 run(s) a transport before its measured ones");
        StringAssert.Contains(markdown, "(mean of 2 runs after 2 warm-up runs, every run verified row by row)");
        Assert.AreEqual("–", MarkdownTable.With(markdown, "Paired × PipelinedCopy (±95% CI)").Row("TcpClient2")["Paired × PipelinedCopy (±95% CI)"]);
        Assert.DoesNotContain("## The machine's noise", markdown, "-p:Calibrate=false: no calibration");
        StringAssert.Contains(markdown, "- Note (reference): PipelinedCopy read on 2 connections");

        (exitCode, output) = HostingTests.RunBuild("RunAll", byTransport, "-p:RepetitionOrder=Sometimes", "-p:Transports=PipelinedCopy", "-p:RecordCounts=2000");
        Assert.AreNotEqual(0, exitCode);
        StringAssert.Contains(output, "error IT1001: RepetitionOrder must be Interleaved or ByTransport (was 'Sometimes').");
    }
}
