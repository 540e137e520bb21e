using Microsoft.Build.Framework;
using TaskItem = Microsoft.Build.Utilities.TaskItem;

namespace IntegrationTasks.Tests;

/// <summary>RunAll's plan as data (<see cref="RunPlanner"/>): interleaved rounds or runs by transport, two orders of one plan.</summary>
[TestClass]
[TestCategory("Unit")]
public sealed class RunPlanTests
{
    private static readonly PlanTransport[] Five =
    [
        new("PipelinedCopy", [1000], RunKind.Reference), new("TcpClient2", [1000], ServerTarget: "TcpServer2", PortProperty: "Port", ServerPort: 8081),
        new("TcpClientMultiThreadTest3", [1000], ServerTarget: "TcpTestServer3", PortProperty: "Port", ServerPort: 8081),
        new("GrpcClient", [1000], ServerTarget: "GrpcServer", PortProperty: "GrpcPort", ServerPort: 8085),
        new("GrpcStreaming", [1000], ServerTarget: "GrpcServer", PortProperty: "GrpcPort", ServerPort: 8085),
    ];

    private static RunPlan Plan(int seed, RunOrder order = RunOrder.Interleaved, int warmupRuns = 1, int[]? clients = null, int referenceEvery = 0,
        IReadOnlyList<PlanTransport>? transports = null, int repetitions = 4) =>
        RunPlanner.Plan(transports ?? Five, new RunPlanSettings(clients ?? [1, 2], 500, repetitions, warmupRuns, order, seed, referenceEvery), () => 40_000);

    private static string Key(RunStep step) => $"{step.Transport.Name}/{step.Run.Clients}";

    [TestMethod]
    public void Rounds_run_every_transport_once_each_in_a_seeded_shuffle_after_all_the_warm_ups()
    {
        var plan = Plan(7);
        Assert.AreEqual(7, plan.Seed);
        Assert.HasCount(5 * 2 * 5, plan.Runs); // transports × client counts × (warm-up + 4)
        Assert.IsTrue(plan.Runs.All(r => r.Group == 1), "interleaved: one group");
        // The warm-ups first, in the order listed; then round 1, 2, 3, 4, each with every transport and client count once.
        var warmups = plan.Runs.TakeWhile(r => r.Round == 0).ToList();
        Assert.HasCount(10, warmups);
        CollectionAssert.AreEqual(new[] { "PipelinedCopy/1", "PipelinedCopy/2", "TcpClient2/1", "TcpClient2/2" }, warmups.Take(4).Select(Key).ToArray());
        Assert.IsTrue(warmups.All(r => r.Run.Repetition == 0));
        var rounds = plan.Runs.Skip(10).Chunk(10).ToList();
        Assert.HasCount(4, rounds);
        for (var round = 1; round <= 4; round++)
        {
            var inRound = rounds[round - 1];
            Assert.IsTrue(inRound.All(r => r.Round == round && r.Run.Repetition == round), $"round {round}");
            CollectionAssert.AreEquivalent(warmups.Select(Key).ToArray(), inRound.Select(Key).ToArray(), $"round {round}");
            CollectionAssert.AreEqual(Enumerable.Range(1, 10).ToArray(), inRound.Select(r => r.Position).ToArray());
            Assert.IsTrue(inRound.All(r => r.RunsInRound == 10));
        }
        // Shuffled: the rounds are not all in one order; the same seed gives the same order, another seed another.
        Assert.IsGreaterThan(1, rounds.Select(r => string.Join(",", r.Select(Key))).Distinct().Count());
        CollectionAssert.AreEqual(plan.Runs.Select(Key).ToArray(), Plan(7).Runs.Select(Key).ToArray());
        CollectionAssert.AreNotEqual(plan.Runs.Select(Key).ToArray(), Plan(8).Runs.Select(Key).ToArray());
    }

    /// <summary>
    /// Each transport's warm-ups back to back left the JIT recompiling in round 1: it holds back while new code keeps coming, and every
    /// transport's first run brings new code. So the first warm-up of every transport comes before the second of any.
    /// </summary>
    [TestMethod]
    public void Several_warm_ups_go_in_warm_up_rounds_the_first_of_every_transport_before_the_second_of_any()
    {
        var plan = Plan(7, warmupRuns: 2, clients: [1]);
        var warmups = plan.Runs.TakeWhile(r => r.Round == 0).ToList();
        string[] listed = ["PipelinedCopy", "TcpClient2", "TcpClientMultiThreadTest3", "GrpcClient", "GrpcStreaming"];
        CollectionAssert.AreEqual(listed.Select(t => $"{t}/1").Concat(listed.Select(t => $"{t}/2")).ToArray(),
            warmups.Select(r => $"{r.Transport.Name}/{r.Run.WarmupRun}").ToArray());
        Assert.IsTrue(warmups.All(r => r.Run.Repetition == 0));
        Assert.HasCount(5 * 2 + 5 * 4, plan.Runs);
    }

    [TestMethod]
    public void With_ReferenceEvery_the_reference_also_runs_after_every_so_many_runs_measured_against_it()
    {
        PlanTransport[] transports =
        [
            new("PipelinedCopy", [1000], RunKind.Reference), new("PipelinedCopyRange", [1000], RunKind.Reference, ServerWork: "Range"),
            new("TcpClient2", [1000]), new("GrpcClient", [1000]), new("RestJson", [1000]), new("WebSocketClient", [1000]),
            new("FileTransferRequest", [1000], ServerWork: "Range"), new("Peer", [1000], RunKind.Peer, OneClient: true),
        ];
        var measured = Plan(5, referenceEvery: 2, transports: transports, repetitions: 6).Runs.Where(r => r.Round != 0).ToList();
        // Walking the runs at one client count in order: never more than two runs measured against PipelinedCopy (the four others) without
        // a run of it between, nor two against PipelinedCopyRange (FileTransferRequest, whose server reads ranges) without one of that.
        foreach (var clients in new[] { 1, 2 })
            foreach (var (reference, measuredAgainst) in new[] { ("PipelinedCopy", new[] { "TcpClient2", "GrpcClient", "RestJson", "WebSocketClient" }), ("PipelinedCopyRange", new[] { "FileTransferRequest" }) })
            {
                var since = 0;
                foreach (var run in measured.Where(r => r.Run.Clients == clients))
                {
                    if (run.Transport.Name == reference)
                        since = 0;
                    else if (measuredAgainst.Contains(run.Transport.Name) && ++since > 2)
                        Assert.Fail($"{run.Transport.Name} at {clients} clients is the third run since {reference} ran (round {run.Round}, {run.Position}).");
                }
            }
        // Four runs a round against PipelinedCopy at one client, one of its own: extras, at most one for every two of those 24 runs.
        var pipelined = measured.Count(r => r.Transport.Name == "PipelinedCopy" && r.Run.Clients == 1);
        Assert.IsTrue(pipelined is > 6 and <= 6 + 24 / 2, $"{pipelined} runs of PipelinedCopy");
        // The peer runs one client only and is measured against nothing; every transport but the references runs once a round.
        Assert.IsTrue(new[] { "TcpClient2", "GrpcClient", "RestJson", "WebSocketClient", "FileTransferRequest" }
            .All(t => measured.Count(r => r.Transport.Name == t && r.Run.Clients == 1) == 6 && measured.Count(r => r.Transport.Name == t && r.Run.Clients == 2) == 6));
        Assert.AreEqual(6, measured.Count(r => r.Transport.Name == "Peer"));
        foreach (var round in measured.GroupBy(r => r.Round))
        {
            // Never an extra run right before the round's own: within a round no reference runs twice in a row at one client count.
            foreach (var (a, b) in round.Zip(round.Skip(1)))
                Assert.IsFalse(Key(a) == Key(b), $"{Key(a)} twice in a row in round {round.Key}");
            // An extra run is its round's run of the reference: same round and repetition; its place tells it from the other.
            Assert.IsTrue(round.All(r => r.Run.Repetition == round.Key));
            CollectionAssert.AreEqual(Enumerable.Range(1, round.Count()).ToArray(), round.Select(r => r.Position).ToArray());
        }
        // Without it: once a round at each client count, as before.
        Assert.AreEqual(6 * 2, Plan(5, transports: transports, repetitions: 6).Runs.Count(r => r.Round != 0 && r.Transport.Name == "PipelinedCopy"));
        Assert.AreEqual(ErrorCodes.InvalidParameter,
            Assert.ThrowsExactly<IntegrationException>(() => Plan(5, referenceEvery: -1, transports: transports)).Code);
    }

    [TestMethod]
    public void Interleaved_each_server_is_started_once_and_servers_that_read_one_port_property_get_ports_of_their_own()
    {
        var plan = Plan(1);
        CollectionAssert.AreEqual(new[] { "TcpServer2:8081", "TcpTestServer3:40000", "GrpcServer:8085" },
            plan.Servers.Select(s => $"{s.ServerTarget}:{s.Port}").ToArray());
        // GrpcStreaming shares the server started for GrpcClient: told as failed if it does not start.
        CollectionAssert.AreEqual(new[] { "GrpcStreaming" }, plan.OtherServerUsers.Select(s => s.Transport.Name).ToArray());
        // As items: every run carries its server's port; both gRPC transports the one gRPC server's.
        var steps = PlanRunAll.ToItems(plan, progress: true).ToList();
        CollectionAssert.AreEqual(new[] { "Server", "Server", "Server", "ServerUser" }, steps.Take(4).Select(s => s.GetMetadata("Kind")).ToArray());
        Assert.IsTrue(steps.All(s => s.GetMetadata("Group") == "1" && s.GetMetadata("StopOnFailure") == "false"));
        CollectionAssert.AllItemsAreUnique(steps.Select(s => s.ItemSpec).ToArray(), "each step its own name: the targets take runs out by name");
        foreach (var run in steps.Where(s => s.GetMetadata("Kind") == "Run"))
        {
            var properties = Properties(run);
            Assert.AreEqual("Run", properties["ProgressLine"]);
            Assert.AreEqual(run.GetMetadata("Records"), properties["Records"]);
            Assert.AreEqual(properties["Transport"] switch
            {
                "TcpClient2" => "Port=8081", "TcpClientMultiThreadTest3" => "Port=40000", "GrpcClient" or "GrpcStreaming" => "GrpcPort=8085", _ => "",
            }, string.Join(";", properties.Where(p => p.Key.EndsWith("Port", StringComparison.Ordinal)).Select(p => $"{p.Key}={p.Value}")));
        }
    }

    [TestMethod]
    public void Every_run_is_verified_and_only_a_relayed_run_is_given_the_fault()
    {
        // The client runs in the run's own project instance: what the command line says of Verify and Fault is overridden there.
        var plan = Plan(0, RunOrder.ByTransport, repetitions: 1);
        foreach (var useRelay in new[] { false, true })
            foreach (var run in PlanRunAll.ToItems(plan, progress: false, useRelay: useRelay).Where(s => s.GetMetadata("Kind") == "Run").Select(Properties))
            {
                Assert.AreEqual("true", run["Verify"], run["Transport"]);
                // With a relay, a transport with a port to put it in front of is given the fault in the relayed instance (_PlannedRun).
                var relayed = useRelay && run["Transport"] != "PipelinedCopy";
                Assert.AreEqual(relayed ? null : "None", run.GetValueOrDefault("Fault"), $"{run["Transport"]}, relay {useRelay}");
            }
    }

    [TestMethod]
    public void By_transport_each_transport_is_a_group_of_its_server_and_its_runs_with_the_peer_last()
    {
        PlanTransport[] transports = [new("Peer", [1000], RunKind.Peer, OneClient: true, ClientTarget: "SqliteAttach"), .. Five];
        var plan = Plan(0, RunOrder.ByTransport, transports: transports, repetitions: 2);
        CollectionAssert.AreEqual(new[] { "PipelinedCopy", "TcpClient2", "TcpClientMultiThreadTest3", "GrpcClient", "GrpcStreaming", "Peer" },
            plan.Runs.Select(r => r.Transport.Name).Distinct().ToArray());
        // Each transport its own server (the configured port: they never run at once), GrpcServer once for each of its transports.
        CollectionAssert.AreEqual(new[] { "2 TcpServer2:0", "3 TcpTestServer3:0", "4 GrpcServer:0", "5 GrpcServer:0" },
            plan.Servers.Select(s => $"{s.Group} {s.ServerTarget}:{s.Port}").ToArray());
        Assert.IsEmpty(plan.OtherServerUsers);
        // Within a transport: the warm-up, then its repetitions at one client, then at two (the peer at one only).
        CollectionAssert.AreEqual(new[] { "1/0", "1/1", "1/2", "2/0", "2/1", "2/2" },
            plan.Runs.Where(r => r.Group == 2).Select(r => $"{r.Run.Clients}/{r.Run.Repetition}").ToArray());
        CollectionAssert.AreEqual(new[] { "1/0", "1/1", "1/2" }, plan.Runs.Where(r => r.Transport.Name == "Peer").Select(r => $"{r.Run.Clients}/{r.Run.Repetition}").ToArray());
        // Items: a progress line before each transport's first run, which says its place; a transport's first failed run ends its runs.
        var steps = PlanRunAll.ToItems(plan, progress: true).ToList();
        Assert.IsTrue(steps.All(s => s.GetMetadata("StopOnFailure") == "true"));
        foreach (var group in steps.GroupBy(s => s.GetMetadata("Group")))
            CollectionAssert.AllItemsAreUnique(group.Select(s => s.ItemSpec).ToArray());
        var firsts = steps.Where(s => s.GetMetadata("Kind") == "Run").Select(Properties).Where(p => p["ProgressLine"] == "Transport").ToList();
        CollectionAssert.AreEqual(new[] { "1 of 6", "2 of 6", "3 of 6", "4 of 6", "5 of 6", "6 of 6" },
            firsts.Select(p => $"{p["TransportOrdinal"]} of {p["TransportsInPlan"]}").ToArray());
        var peer = Properties(steps.Last());
        Assert.AreEqual(("SqliteAttach", "", "true"), (peer["ClientTarget"], peer["ServerTarget"], peer["TransportOneClient"]));
        Assert.AreEqual(0, plan.Seed);
    }

    [TestMethod]
    public void A_transport_capped_below_every_record_count_has_no_run_and_its_server_is_not_started()
    {
        // As CapRecordCounts leaves SoapSmallRequests at 200,000 records: no counts left. It failed the whole plan ("RecordCounts is empty").
        PlanTransport[] transports = [new("SoapSmallRequests", [], ServerTarget: "SoapServer", PortProperty: "SoapPort", ServerPort: 8083), Five[1]];
        foreach (var order in new[] { RunOrder.Interleaved, RunOrder.ByTransport })
        {
            var plan = Plan(3, order, clients: [1], transports: transports, repetitions: 2);
            Assert.IsTrue(plan.Runs.All(r => r.Transport.Name == "TcpClient2") && plan.Runs.Count == 3, order.ToString());
            CollectionAssert.AreEqual(new[] { "TcpServer2" }, plan.Servers.Select(s => s.ServerTarget).ToArray());
        }
    }

    [TestMethod]
    public void The_task_checks_its_order_its_seed_and_StopAtPrecision_before_any_run()
    {
        PlanRunAll Task(FakeBuildEngine engine, string order = "Interleaved", string seed = "", bool relay = false, string precision = "") => new()
        {
            BuildEngine = engine, BatchSize = 500, Repetitions = 2, RepetitionOrder = order, Seed = seed, UseRelay = relay, StopAtPrecision = precision,
            Transports = [Item("TcpClient2", "TcpServer2")],
        };
        var engine = new FakeBuildEngine();
        var drawn = Task(engine);
        Assert.IsTrue(drawn.Execute(), engine.Log);
        Assert.IsGreaterThan(0, drawn.SeedUsed, "no seed given: one is drawn, and recorded");
        Assert.AreEqual(1000, drawn.MaxRecords);
        // A relay keeps each transport's runs together (a relay is one per run): by transport, no seed.
        var relayed = Task(engine, relay: true, seed: "4");
        Assert.IsTrue(relayed.Execute(), engine.Log);
        Assert.AreEqual(0, relayed.SeedUsed);
        foreach (var refused in new[] { Task(engine, order: "Shuffled"), Task(engine, seed: "soon"), Task(engine, relay: true, precision: "5") })
        {
            engine = new FakeBuildEngine();
            refused.BuildEngine = engine;
            Assert.IsFalse(refused.Execute());
            Assert.IsTrue(engine.HasErrorCode(ErrorCodes.InvalidParameter), engine.Log);
        }
    }

    [TestMethod]
    public void A_transport_s_runs_are_its_sizes_times_clients_times_repetitions_with_the_warm_ups_at_the_smallest()
    {
        static string[] Runs(IEnumerable<PlannedRun> runs) => [.. runs.Select(r => $"{r.Records}/{r.Clients}/{r.Repetition}/{r.WarmupRun}")];
        // Smallest first; the warm-ups warm the code, the same at every size: at the smallest only.
        var runs = RunMatrix.Plan(RunMatrix.ParseRecordCounts(["2000+3000", "1000"]), [1], 1000, 2, 1, null);
        CollectionAssert.AreEqual(new[] { "1000/1/0/1", "1000/1/1/0", "1000/1/2/0", "2000/1/1/0", "2000/1/2/0", "3000/1/1/0", "3000/1/2/0" }, Runs(runs));
        Assert.AreEqual(3, runs[5].TotalBatches);
        // Several warm-ups, each a run of its own (WarmupRun tells them apart, so MSBuild neither batches them into one call nor skips one).
        CollectionAssert.AreEqual(new[] { "2000/1/0/1", "2000/1/0/2", "2000/1/0/3", "2000/1/1/0", "2000/1/2/0" }, Runs(RunMatrix.Plan([2000], [1], 1000, 2, 3, null)));
        // Each client count that has a batch per client; a client count's warm-ups at the smallest size it runs at.
        CollectionAssert.AreEqual(new[] { "2000/1/1/0", "2000/1/2/0", "8000/1/1/0", "8000/1/2/0", "8000/4/1/0", "8000/4/2/0" },
            Runs(RunMatrix.Plan([2000, 8000], [1, 4], 1000, 2, 0, null)));
        CollectionAssert.AreEqual(new[] { "2000/1/0/1", "2000/1/1/0", "8000/1/1/0", "8000/4/0/1", "8000/4/1/0" }, Runs(RunMatrix.Plan([2000, 8000], [1, 4], 1000, 1, 1, null)));
        Assert.AreEqual(0, RunMatrix.WarmupCount(false, 3));
        foreach (var refused in new Action[]
                 {
                     () => RunMatrix.Plan([1500], [1], 1000, 2, 1, null), () => RunMatrix.Plan([1000], [2], 1000, 1, 1, null),
                     () => RunMatrix.ParseRecordCounts(["0"]), () => RunMatrix.WarmupCount(true, 0), () => RunMatrix.Plan([1000], [1], 1000, 0, 1, null),
                 })
            Assert.AreEqual(ErrorCodes.InvalidParameter, Assert.ThrowsExactly<IntegrationException>(refused).Code);
    }

    [TestMethod]
    public void The_line_before_an_interleaved_run_says_its_round_its_place_and_the_time_left()
    {
        var line = RunProgressEstimate.DescribeRun("round 2 of 5", "3 of 7", "TcpClient2", 20_000, TimeSpan.FromSeconds(200), TimeSpan.FromSeconds(100));
        StringAssert.StartsWith(line, "RunAll round 2 of 5, run 3 of 7: ");
        StringAssert.Contains(line, ": TcpClient2, 20,000 records;");
        StringAssert.EndsWith(line, "1 min 40 s elapsed, about 3 min 20 s left.");
    }

    [TestMethod]
    public void Each_payload_size_is_a_pass_of_its_own_with_batches_and_counts_bounded_by_bytes()
    {
        var engine = new FakeBuildEngine();
        var task = new PlanRunAll
        {
            BuildEngine = engine, BatchSize = 1000, Repetitions = 2, Warmup = false, Seed = "7", Progress = true,
            Transports = [Item("TcpClient2", "TcpServer2", "20000+50000")],
            PayloadSizes = "0+1024+65536+1048576", BatchBytes = 1 << 20, MaxRunBytes = 100L << 20,
        };
        Assert.IsTrue(task.Execute(), engine.Log);
        var runs = task.Steps.Where(s => s.GetMetadata("Kind") == "Run").Select(Properties)
            .Select(p => (Payload: int.Parse(p["PayloadBytes"]), Batch: int.Parse(p["BatchSize"]), Records: int.Parse(p["Records"]), Batches: int.Parse(p["TotalBatches"])))
            .Distinct().ToList();
        // 0: as asked. 1 KiB: 1,000 records a batch fit 1 MiB. 64 KiB: 16 a batch; 100 MiB a run caps both counts to 1,600. 1 MiB: one a batch, 100 a run.
        CollectionAssert.AreEqual(new[]
        {
            (0, 1000, 20000, 20), (0, 1000, 50000, 50), (1024, 1000, 20000, 20), (1024, 1000, 50000, 50), (65536, 16, 1600, 100), (1048576, 1, 100, 100),
        }, runs);
        // The passes run one after the other: each its own groups (its data made before its servers start), its servers stopped before the next.
        var groups = task.Steps.GroupBy(s => s.GetMetadata("PayloadBytes")).Select(g => g.Select(s => int.Parse(s.GetMetadata("Group"))).Distinct().ToList()).ToList();
        CollectionAssert.AreEqual(new[] { 1, 2, 3, 4 }, groups.SelectMany(g => g).ToArray());
        Assert.AreEqual("1600", task.Steps.First(s => s.GetMetadata("PayloadBytes") == "65536").GetMetadata("GroupRecords"));
        Assert.AreEqual((50000, 0), (task.MaxRecords, task.FirstPayloadBytes));
        // Without a payload the steps are as they were: no payload or batch size of their own.
        var plain = new PlanRunAll { BuildEngine = engine, BatchSize = 1000, Repetitions = 1, Warmup = false, Seed = "7", Transports = [Item("TcpClient2", "TcpServer2")] };
        Assert.IsTrue(plain.Execute(), engine.Log);
        Assert.IsTrue(plain.Steps.All(s => !Properties(s).ContainsKey("PayloadBytes") && s.GetMetadata("PayloadBytes") == "0"));
    }

    [TestMethod]
    public void The_sweeps_are_axes_of_the_one_plan_batch_sizes_round_trips_and_records_per_client()
    {
        var engine = new FakeBuildEngine();
        static string Run(ITaskItem s) => string.Join('/', new[] { "Records", "Clients", "BatchSize", "TotalBatches", "LatencyMs" }
            .Select(p => Properties(s).GetValueOrDefault(p, "-")));
        PlanRunAll Task(string recordCounts = "1000") => new()
        {
            BuildEngine = engine, BatchSize = 1000, Repetitions = 1, Warmup = false, Seed = "7", Transports = [Item("TcpClient2", "TcpServer2", recordCounts)],
        };
        // FindBatchSize: each batch size a run of its own, at the record count asked for.
        var batches = Task();
        batches.BatchSizes = "100+500";
        Assert.IsTrue(batches.Execute(), engine.Log);
        CollectionAssert.AreEquivalent(new[] { "1000/1/100/10/-", "1000/1/500/2/-" }, batches.Steps.Where(s => s.GetMetadata("Kind") == "Run").Select(Run).ToArray());
        // With a payload, the sizes over BatchBytes are left out and said (the bound alone where every size is over it).
        var payload = Task();
        (payload.BatchSizes, payload.PayloadSizes, payload.BatchBytes) = ("100+500", "2048", 204_800);
        Assert.IsTrue(payload.Execute(), engine.Log);
        CollectionAssert.AreEqual(new[] { "1000/1/100/10/-" }, payload.Steps.Where(s => s.GetMetadata("Kind") == "Run").Select(Run).ToArray());
        StringAssert.Contains(engine.Log, "Batch sizes 500 left out: at 2,048 bytes of payload a row, a batch holds at most 100 records");
        // LatencySweep: each round trip a relayed run of its own (a latency needs the relay).
        var latencies = Task();
        (latencies.LatenciesMs, latencies.UseRelay) = ("0+10", true);
        Assert.IsTrue(latencies.Execute(), engine.Log);
        CollectionAssert.AreEqual(new[] { "1000/1/1000/1/0", "1000/1/1000/1/10" }, latencies.Steps.Where(s => s.GetMetadata("Kind") == "Run").Select(Run).ToArray());
        Assert.IsTrue(latencies.Steps.Where(s => s.GetMetadata("Kind") == "Run").All(s => Properties(s)["Network"] == "Custom"));
        var unrelayed = Task();
        unrelayed.LatenciesMs = "10";
        Assert.IsFalse(unrelayed.Execute());
        Assert.IsTrue(engine.HasErrorCode(ErrorCodes.InvalidParameter), engine.Log);
        // Load: each client count at RecordsPerClient records a client.
        var load = Task("1000+3000");
        (load.ClientCounts, load.RecordsPerClient) = (["1+3"], 1000);
        Assert.IsTrue(load.Execute(), engine.Log);
        CollectionAssert.AreEquivalent(new[] { "1000/1/1000/1/-", "3000/3/1000/3/-" }, load.Steps.Where(s => s.GetMetadata("Kind") == "Run").Select(Run).ToArray());
    }

    [TestMethod]
    public void A_batch_is_checked_against_BatchBytes_and_the_transport_s_message_limit_before_a_run()
    {
        var kilobytes = new PayloadShape(1024, PayloadKind.Bytes);
        BatchBytesCheck.Check("TcpClient2", 1000, kilobytes, 1 << 20, (64 << 20, "MaxFrameBytes"));
        BatchBytesCheck.Check("TcpClient2", 1, new PayloadShape(8 << 20, PayloadKind.Bytes), 1 << 20, (64 << 20, "MaxFrameBytes")); // one record a batch, whatever its size
        var tooMuch = Assert.ThrowsExactly<IntegrationException>(() => BatchBytesCheck.Check("TcpClient2", 2000, kilobytes, 1 << 20, null));
        Assert.AreEqual(ErrorCodes.InvalidParameter, tooMuch.Code);
        StringAssert.Contains(tooMuch.Message, "-p:BatchSize=1024"); // the command that fixes it, as typed
        // Without a payload a batch is the series' rows, whatever its size: no limit of the transport's is checked here.
        BatchBytesCheck.Check("TcpClient2", 100_000, PayloadShape.None, 1 << 20, (64 << 20, "MaxFrameBytes"));
        var overLimit = Assert.ThrowsExactly<IntegrationException>(() =>
            BatchBytesCheck.Check("GrpcClient", 1000, kilobytes, 1 << 20, (1_000_000, "MaxMessageBytes")));
        StringAssert.Contains(overLimit.Message, "-p:MaxMessageBytes"); // the property named by the transport
        // Text is bounded by its worst escaping: six bytes a byte.
        Assert.AreEqual(10 * (6 * 1024 + BatchBytesCheck.RowOverheadBytes), BatchBytesCheck.MostMessageBytes(10, new PayloadShape(1024, PayloadKind.Text)));
        Assert.AreEqual(10 * (1368 + BatchBytesCheck.RowOverheadBytes), BatchBytesCheck.MostMessageBytes(10, kilobytes));
        Assert.AreEqual((1000, 1024, 1, 1), (BatchBytesCheck.EffectiveBatchSize(1000, 0, 1), BatchBytesCheck.EffectiveBatchSize(2000, 1024, 1 << 20),
            BatchBytesCheck.EffectiveBatchSize(1000, 2 << 20, 1 << 20), BatchBytesCheck.EffectiveBatchSize(1, 0, 1)));
    }

    private static TaskItem Item(string name, string server, string recordCounts = "1000")
    {
        var item = new TaskItem(name);
        item.SetMetadata("RecordCounts", recordCounts);
        item.SetMetadata("ServerTarget", server);
        return item;
    }

    private static Dictionary<string, string> Properties(ITaskItem item) =>
        item.GetMetadata("AdditionalProperties").Split(';').Select(p => p.Split('=', 2)).ToDictionary(p => p[0], p => p[1]);
}
