using IntegrationTasks.Baseline;

namespace IntegrationTasks.Tests;

/// <summary>The references every transport is measured against: the two server reading modes, DirectCopy, PipelinedCopy and the peers.</summary>
[TestClass]
[TestCategory("EndToEnd")]
[DoNotParallelize]
public sealed class BaselineTests
{
    private const int Records = 600;

    private static async Task<TestDatabases> GeneratedAsync(string provider)
    {
        var databases = await TestDatabases.CreateAsync(provider);
        await new DataGenerator(databases.Server, NullEventLog.Instance).GenerateAsync(Records, CancellationToken.None);
        await databases.Client.EnsureSchemaAsync(CancellationToken.None);
        return databases;
    }

    [TestMethod]
    [DataRow("Sqlite")]
    [DataRow("PostgreSql")]
    [DataRow("MariaDb")]
    public async Task Range_reads_return_what_per_record_reads_return(string provider)
    {
        await using var databases = await GeneratedAsync(provider);
        // Runs of consecutive IDs, a gap, a step back, unknown IDs (0, past the end, the largest int) and a single ID.
        int[] ids = [5, 6, 7, 20, 21, 3, 0, Records, Records + 1, Records + 2, 9, int.MaxValue, 40];
        var expected = ids.Where(id => id is >= 1 and <= Records).ToArray();
        foreach (var work in new[] { ServerWork.PerRecord, ServerWork.Range })
        {
            await using var lookup = await RecordLookup.OpenAsync(databases.Server, work, CancellationToken.None);
            var read = new List<ServiceRecord>();
            await foreach (var record in lookup.ReadAsync(ids, CancellationToken.None))
                read.Add(record);
            CollectionAssert.AreEqual(expected, read.Select(r => r.Id).ToArray(), $"{work}: IDs in the order asked, unknown ones left out");
            foreach (var record in read)
                Assert.IsTrue(SampleData.Create(record.Id).SameValuesAs(record), $"{work} altered {record.Id}");
            var range = new List<int>();
            await foreach (var record in lookup.ReadAsync(Records - 2, 5, CancellationToken.None))
                range.Add(record.Id);
            CollectionAssert.AreEqual(new[] { Records - 2, Records - 1, Records }, range, $"{work}: a range running past the end");
        }
    }

    [TestMethod]
    [DataRow("Sqlite", "PerRecord")]
    [DataRow("Sqlite", "Range")]
    [DataRow("PostgreSql", "PerRecord")]
    [DataRow("PostgreSql", "Range")]
    [DataRow("MariaDb", "PerRecord")]
    [DataRow("MariaDb", "Range")]
    public async Task DirectCopy_and_PipelinedCopy_copy_every_row_in_both_modes(string provider, string work)
    {
        await using var databases = await GeneratedAsync(provider);
        TransferClientTask[] copies =
        [
            new DirectCopy { ServerProvider = provider, ServerConnString = databases.Server.ConnectionString, ServerWork = work },
            new PipelinedCopy { ServerProvider = provider, ServerConnString = databases.Server.ConnectionString, ServerWork = work, Answerers = 3, MaxInFlight = 2 },
        ];
        foreach (var copy in copies)
        {
            await databases.Client.EmptyAsync(RecordTable.Client, CancellationToken.None);
            var engine = new FakeBuildEngine();
            Assert.IsTrue(copy.For(databases, engine, totalBatches: 12, batchSize: 50).Execute(), engine.Log);
            Assert.AreEqual(Records, copy.Records);
            var report = await new TransferVerifier(databases.Server, databases.Client).CompareAsync(Records, CancellationToken.None);
            Assert.IsTrue(report.Success, $"{copy.GetType().Name}: {report.Describe()}");
        }
    }

    [TestMethod]
    [DataRow("Sqlite", "Peer: SQLite ATTACH")]
    [DataRow("PostgreSql", "Peer: PostgreSQL COPY")]
    [DataRow("MariaDb", "Peer: MariaDB LOAD DATA")]
    public async Task The_peer_moves_every_row_with_the_databases_own_tools(string provider, string name)
    {
        await using var databases = await GeneratedAsync(provider);
        using var folder = new TempDirectory("it-peer-");
        var runFile = Path.Combine(folder, "run.json");
        var engine = new FakeBuildEngine();
        var peer = new PeerCopy { ServerProvider = provider, ServerConnString = databases.Server.ConnectionString, ResultFile = runFile }
            .For(databases, engine, totalBatches: 6, batchSize: 100);
        Assert.IsTrue(peer.Execute(), engine.Log);
        Assert.AreEqual(Records, peer.Records);
        Assert.AreEqual(name, MeasurementLog.ReadSingle(runFile).Transport);
        var report = await new TransferVerifier(databases.Server, databases.Client).CompareAsync(Records, CancellationToken.None);
        Assert.IsTrue(report.Success, report.Describe());

        // A second copy into a full table breaks the primary key: a coded error, and the transaction rolled back (still exactly one copy).
        engine = new FakeBuildEngine();
        peer.BuildEngine = engine;
        Assert.IsFalse(peer.Execute());
        Assert.IsTrue(engine.HasErrorCode(ErrorCodes.DatabaseFailure), engine.Log);
        StringAssert.Contains(engine.Log, "rolled back");
        Assert.AreEqual(Records, await databases.Client.CountAsync(RecordTable.Client, CancellationToken.None));
    }

    [TestMethod]
    public void RunAll_adds_PipelinedCopyRange_as_the_limit_of_a_transport_that_reads_ranges_in_a_per_ID_run()
    {
        using var artifacts = new TempDirectory("it-range-limit-");
        var (exitCode, output) = HostingTests.RunBuild("RunAll", artifacts, "-p:Transports=FileTransferRequest+PipelinedCopy", "-p:RecordCounts=2000",
            "-p:Repetitions=2", "-p:BatchSize=200", "-p:Peers=false");
        Assert.AreEqual(0, exitCode, output);
        var runs = MeasurementLog.Read(Path.Combine(artifacts, "results", "runs.jsonl"));
        var range = runs.Where(r => r.Transport == "PipelinedCopyRange").ToList();
        Assert.HasCount(5, range, string.Join("\n", runs));
        Assert.IsTrue(range.All(r => r is { Verified: true, ServerWork: "Range" }), string.Join("\n", range));
        Assert.IsTrue(runs.Where(r => r.Transport == "PipelinedCopy").All(r => r.ServerReads == "PerRecord"));
        // MSBuild keeps every project instance to the end of the build: a run is one (its client runs in it), a server's start and stop one each.
        var instances = output.Split('\n').Where(l => l.Contains(" is building ", StringComparison.Ordinal)).ToList();
        Assert.AreEqual((runs.Count, 2, 0), (instances.Count(l => l.Contains("(_PlannedRun target(s))", StringComparison.Ordinal)),
            instances.Count(l => l.Contains("PlannedServer target(s))", StringComparison.Ordinal)), instances.Count(l => !l.Contains("Planned", StringComparison.Ordinal))),
            string.Join("\n", instances));
        var markdown = File.ReadAllText(Path.Combine(artifacts, "results", "results.md"));
        var rangeNote = MarkdownTable.Line(markdown, "FileTransferRequest: its server reads each batch with one range query");
        StringAssert.Contains(rangeNote, "are against PipelinedCopyRange");

        // Where every transport reads ranges, PipelinedCopy is that limit already: no second one.
        using var rangeRun = new TempDirectory("it-range-limit-");
        (exitCode, output) = HostingTests.RunBuild("RunAll", rangeRun, "-p:Transports=FileTransferRequest+PipelinedCopy", "-p:RecordCounts=2000",
            "-p:Repetitions=1", "-p:Warmup=false", "-p:BatchSize=200", "-p:Peers=false", "-p:ServerWork=Range");
        Assert.AreEqual(0, exitCode, output);
        CollectionAssert.AreEquivalent(new[] { "FileTransferRequest", "PipelinedCopy" },
            MeasurementLog.Read(Path.Combine(rangeRun, "results", "runs.jsonl")).Select(r => r.Transport).ToArray());
    }

    [TestMethod]
    public async Task The_server_CPU_a_run_records_is_the_servers_during_the_transfer_only()
    {
        await using var databases = await GeneratedAsync("Sqlite");
        using var folder = new TempDirectory("it-server-cpu-");
        // A stand-in server busy on one core from well before the run: read between repetitions, a run took in all it did while it
        // waited (a whole round of the other transports when interleaved).
        using var busy = Process.Start(new ProcessStartInfo("sh", ["-c", "while :; do :; done"]))!;
        try
        {
            var waiting = Stopwatch.StartNew();
            while (ProcessMemory.CpuSecondsOfTree(busy.Id) is not >= 0.5)
            {
                Assert.IsLessThan(60, waiting.Elapsed.TotalSeconds, "the stand-in server never used half a second of CPU");
                await Task.Delay(50);
            }
            var runFile = Path.Combine(folder, "run.json");
            var engine = new FakeBuildEngine();
            var copy = new PipelinedCopy { ServerConnString = databases.Server.ConnectionString, ServerProcessId = busy.Id, ResultFile = runFile, Answerers = 2 }
                .For(databases, engine, totalBatches: 12, batchSize: 50);
            var cpuBefore = ProcessMemory.CpuSecondsOfTree(busy.Id)!.Value;
            Assert.IsTrue(copy.Execute(), engine.Log);
            var cpuAfter = ProcessMemory.CpuSecondsOfTree(busy.Id)!.Value;
            var run = MeasurementLog.ReadSingle(runFile);
            Assert.IsNotNull(run.ServerCpuSeconds, "read at the transfer's start and end");
            // Read within the task's execution, so no more than the stand-in used meanwhile (to rounding): nothing of the half second before.
            Assert.IsLessThanOrEqualTo(cpuAfter - cpuBefore + 1e-9, run.ServerCpuSeconds.Value, $"{run.ServerCpuSeconds} s recorded, {cpuAfter - cpuBefore} s used while the task ran");
        }
        finally
        {
            busy.Kill();
            await busy.WaitForExitAsync();
        }
    }

    [TestMethod]
    public Task Many_clients_keep_a_pool_thread_ready_for_each_client_while_they_run() =>
        // Each client's import holds a pool thread (SQLite is synchronous): at 16 clients the replies queued behind them.
        AssertPoolThreadsReservedWhileRunningAsync(databases => new DirectCopy { ServerConnString = databases.Server.ConnectionString, Clients = 3 }, 3);

    [TestMethod]
    public Task PipelinedCopy_keeps_a_pool_thread_ready_for_each_reader_and_its_writer_while_it_copies() =>
        // Interleaved, the same 200,000 records took 1.08-1.95 s: the pool met the readers' synchronous reads as starvation and added
        // threads slowly, from however many it had kept through the other transports' runs.
        AssertPoolThreadsReservedWhileRunningAsync(databases => new PipelinedCopy { ServerConnString = databases.Server.ConnectionString, Answerers = 3, MaxInFlight = 2 }, 4);

    /// <summary>The pool's minimum raised by <paramref name="reserved"/> while the copy runs (held up on a locked ClientTable), and back after.</summary>
    private static async Task AssertPoolThreadsReservedWhileRunningAsync(Func<TestDatabases, InProcessCopy> make, int reserved)
    {
        await using var databases = await GeneratedAsync("Sqlite");
        ThreadPool.GetMinThreads(out var minimumBefore, out _);
        // The client's database locked: the first import waits, the run holds whatever it holds.
        await using var blocker = await databases.Client.OpenAsync(CancellationToken.None);
        await using (var begin = blocker.CreateCommand())
        {
            begin.CommandText = "BEGIN IMMEDIATE";
            await begin.ExecuteNonQueryAsync();
        }
        var engine = new FakeBuildEngine();
        var copy = make(databases).For(databases, engine, totalBatches: 12, batchSize: 50, timeoutSeconds: 120);
        var copying = Task.Run(copy.Execute);
        await Eventually.WaitUntilAsync(() => ThreadPoolReservation.ReservedThreads == reserved, $"{reserved} pool threads reserved",
            TimeSpan.FromSeconds(30), () => $"{ThreadPoolReservation.ReservedThreads} reserved");
        ThreadPool.GetMinThreads(out var minimumDuring, out _);
        Assert.AreEqual(minimumBefore + reserved, minimumDuring);
        await using (var commit = blocker.CreateCommand())
        {
            commit.CommandText = "COMMIT";
            await commit.ExecuteNonQueryAsync();
        }
        Assert.IsTrue(await copying.WaitAsync(TimeSpan.FromSeconds(60)), engine.Log);
        Assert.AreEqual(Records, copy.Records);
        ThreadPool.GetMinThreads(out var minimumAfter, out _);
        Assert.AreEqual((0, minimumBefore), (ThreadPoolReservation.ReservedThreads, minimumAfter), "the pool's minimum is back");
    }

    [TestMethod]
    public async Task A_failing_insert_stops_PipelinedCopy_with_its_code_and_commits_no_partial_batch()
    {
        await using var databases = await GeneratedAsync("Sqlite");
        // Row 275 already on the client: the batch 251..300 cannot commit; the readers must not wait on a full queue forever.
        await using (var writer = await RecordWriter.OpenAsync(databases.Client, RecordTable.Client, CancellationToken.None))
            await writer.InsertBatchAsync([SampleData.Create(275)], CancellationToken.None);
        var engine = new FakeBuildEngine();
        var copy = new PipelinedCopy { ServerConnString = databases.Server.ConnectionString, Answerers = 2, MaxInFlight = 1 }
            .For(databases, engine, totalBatches: 12, batchSize: 50, timeoutSeconds: 60);
        var started = DateTime.UtcNow;
        Assert.IsFalse(copy.Execute());
        Assert.IsTrue(engine.HasErrorCode(ErrorCodes.DatabaseFailure), engine.Log);
        Assert.IsLessThan(30, (DateTime.UtcNow - started).TotalSeconds, "stopped by the failure, not by the timeout");
        await using var connection = await databases.Client.OpenAsync(CancellationToken.None);
        await using var command = connection.CreateCommand();
        command.CommandText = "SELECT COUNT(*) FROM ClientTable WHERE ClientTableID BETWEEN 251 AND 300";
        Assert.AreEqual(1L, Convert.ToInt64(await command.ExecuteScalarAsync()), "the failed batch left nothing but the row that was there");
    }

    [TestMethod]
    public async Task Bad_settings_are_coded_errors()
    {
        await using var databases = TestDatabases.Sqlite();
        foreach (var copy in new TransferClientTask[]
                 {
                     new DirectCopy { ServerConnString = databases.Server.ConnectionString, ServerWork = "Bulk" },
                     new PipelinedCopy { ServerConnString = databases.Server.ConnectionString, Answerers = 0 },
                 })
        {
            var engine = new FakeBuildEngine();
            Assert.IsFalse(copy.For(databases, engine, 1, 10).Execute());
            Assert.IsTrue(engine.HasErrorCode(ErrorCodes.InvalidParameter), engine.Log);
        }
        var select = new SelectPeer { BuildEngine = new FakeBuildEngine(), ServerProvider = "Sqlite", ClientProvider = "PostgreSql", RecordCounts = ["1000"] };
        Assert.IsTrue(select.Execute());
        Assert.IsEmpty(select.Peer);
        StringAssert.Contains(select.NotRun.Single().GetMetadata("Reason"), "different providers");
    }
}
