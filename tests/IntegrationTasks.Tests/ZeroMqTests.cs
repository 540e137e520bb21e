using IntegrationTasks.Queues.ZeroMq;
using NetMQ;
using NetMQ.Sockets;

namespace IntegrationTasks.Tests;

/// <summary>ZeroMQ, no broker: both clients against one ROUTER server, a client no one here wrote, a refusal and a fault through RunAll.</summary>
[TestClass]
[TestCategory("EndToEnd")]
public sealed class ZeroMqTests
{
    /// <summary>A ZeroMQ server in this process, on a free port of its own.</summary>
    private sealed class RunningServer : IAsyncDisposable
    {
        private readonly CancellationTokenSource _stop = new();
        private Task _serving = Task.CompletedTask;

        public CapturingLog Log { get; } = new();
        public string Endpoint { get; } = $"tcp://127.0.0.1:{TestPorts.Free()}";

        public static async Task<RunningServer> StartAsync(Database database, int maxBatchRecords = SettingDefaults.MaxBatchRecords, NetMQCertificate? curve = null)
        {
            var running = new RunningServer();
            var serve = await new ZeroMqResponder(new RecordSource(database, ServerWork.PerRecord), running.Endpoint, running.Log) { MaxBatchRecords = maxBatchRecords, Curve = curve }
                .StartAsync(CancellationToken.None);
            running._serving = serve(running._stop.Token);
            return running;
        }

        public async ValueTask DisposeAsync()
        {
            await _stop.CancelAsync();
            await _serving.WaitAsync(TimeSpan.FromSeconds(30));
            _stop.Dispose();
        }
    }

    private static ZeroMqClientTask Client(bool pipelined, string endpoint, TestDatabases databases, FakeBuildEngine engine, int totalBatches = 10, int batchSize = 200)
    {
        ZeroMqClientTask client = pipelined ? new ZeroMqDealer() : new ZeroMqRequest();
        client.Endpoint = endpoint;
        client.MaxInFlight = 4;
        return client.For(databases, engine, totalBatches, batchSize);
    }

    [TestMethod]
    [DataRow(false, "Sqlite")]
    [DataRow(true, "Sqlite")]
    [DataRow(true, "PostgreSql")]
    public async Task Both_ZeroMQ_clients_move_every_row_intact(bool pipelined, string provider)
    {
        var client = await TransferChecks.AssertServedEveryRowAsync(provider, 2000, databases => RunningServer.StartAsync(databases.Server),
            (server, databases, engine) => Client(pipelined, server.Endpoint, databases, engine));
        Assert.IsGreaterThan(2000L * 100, client.BytesReceived);
    }

    [TestMethod]
    public async Task A_request_the_server_refuses_fails_its_client_with_the_servers_code_and_the_server_answers_the_next_one()
    {
        await using var databases = await TransferChecks.WithRecordsAsync("Sqlite", 1000);
        await using (var strict = await RunningServer.StartAsync(databases.Server, maxBatchRecords: 100))
        {
            var engine = new FakeBuildEngine();
            Assert.IsFalse(await Task.Run(Client(pipelined: true, strict.Endpoint, databases, engine, 5, 200).Execute), engine.Log);
            Assert.IsTrue(engine.HasErrorCode(ErrorCodes.BatchTooLarge), engine.Log);
            Assert.IsTrue(strict.Log.Lines.Any(l => l.StartsWith($"warning {ErrorCodes.BatchTooLarge}", StringComparison.Ordinal)), string.Join("\n", strict.Log.Lines));
        }
        await databases.Client.EmptyAsync(RecordTable.Client, CancellationToken.None);

        // A client no one here wrote (a bare DEALER socket) sends what is not XML: refused with its code in the status frame, and the
        // same server answers the next client in full.
        await using var server = await RunningServer.StartAsync(databases.Server);
        var refusal = await Task.Run(() =>
        {
            using var dealer = new DealerSocket();
            dealer.Options.Linger = TimeSpan.Zero;
            dealer.Connect(server.Endpoint);
            dealer.SendMoreFrame(BitConverter.GetBytes(7)).SendFrame("not a request"u8.ToArray());
            var reply = new NetMQMessage();
            Assert.IsTrue(dealer.TryReceiveMultipartMessage(TimeSpan.FromSeconds(10), ref reply, 3), "no reply");
            Assert.AreEqual((3, 7), (reply.FrameCount, BitConverter.ToInt32(reply[0].Buffer, 0)));
            return Encoding.UTF8.GetString(reply[1].ToByteArray());
        });
        StringAssert.StartsWith(refusal, $"{ErrorCodes.MalformedXml}: ");
        var client = Client(pipelined: false, server.Endpoint, databases, new FakeBuildEngine(), 5, 200);
        Assert.IsTrue(await Task.Run(client.Execute));
        Assert.AreEqual(1000, (await new TransferVerifier(databases.Server, databases.Client).VerifyAsync(1000, CancellationToken.None)).Matched);
    }

    [TestMethod]
    public async Task A_client_with_no_server_fails_with_IT3003_and_does_not_resume()
    {
        // ZeroMQ connects in the background and never says a connection was refused: what the client sees is no connection at all.
        await using var databases = TestDatabases.Sqlite();
        var engine = new FakeBuildEngine();
        Assert.IsFalse(await Task.Run(Client(pipelined: true, $"tcp://127.0.0.1:{TestPorts.Free()}", databases, engine, 2, 100).Execute));
        Assert.IsTrue(engine.HasErrorCode(ErrorCodes.ConnectionFailed), engine.Log);
        Assert.IsFalse(engine.Warnings.Any(w => w.Code == ErrorCodes.ConnectionLost), engine.Log); // nothing to resume: it never connected
    }

    [TestMethod]
    public void RunAll_with_a_reset_in_every_repetition_resumes_both_ZeroMQ_clients_with_every_row_once()
    {
        using var artifacts = new TempDirectory("it-zeromq-fault-");
        var (exitCode, output) = HostingTests.RunBuild("RunAll", artifacts, "-p:Fault=Reset", "-p:FaultAfterBytes=400000", "-p:Transports=ZeroMqRequest+ZeroMqDealer",
            "-p:RecordCounts=5000", "-p:Repetitions=1", "-p:Warmup=false", "-p:BatchSize=100", "-p:Peers=false");
        Assert.AreEqual(0, exitCode, output);
        var runs = MeasurementLog.Read(Path.Combine(artifacts, "results", "runs.jsonl"));
        CollectionAssert.AreEquivalent(new[] { "ZeroMqRequest", "ZeroMqDealer" }, runs.Select(r => r.Transport).ToArray());
        foreach (var run in runs)
            Assert.IsTrue(run is { FaultInjected: true, Completed: true, Reconnects: >= 1, RowsMatched: 5000, RowsDuplicated: 0 }, run.ToString());
        HostingTests.AssertEndedCleanly(artifacts);
    }

    [TestMethod]
    [DataRow(false)]
    [DataRow(true)]
    [System.Runtime.Versioning.UnsupportedOSPlatform("windows")]
    public async Task Over_CurveZMQ_both_clients_move_every_row_and_the_servers_secret_key_is_its_owners_alone(bool pipelined)
    {
        using var folder = new TempDirectory("it-curve-");
        await using var databases = await TransferChecks.WithRecordsAsync("Sqlite", 2000);
        await using var server = await RunningServer.StartAsync(databases.Server, curve: ZeroMqCurve.ServerCertificate(folder));
        var engine = new FakeBuildEngine();
        var client = Client(pipelined, server.Endpoint, databases, engine);
        client.Tls = true;
        client.TlsFolder = folder;
        await client.AssertMovesEveryRowAsync(engine, databases, 2000);
        Assert.AreEqual(UnixFileMode.UserRead | UnixFileMode.UserWrite, File.GetUnixFileMode(Path.Combine(folder, ZeroMqCurve.SecretKeyFile)));
    }

    [TestMethod]
    public async Task A_plaintext_client_at_a_Curve_server_is_never_answered_and_fails_coded()
    {
        using var folder = new TempDirectory("it-curve-");
        await using var databases = await TransferChecks.WithRecordsAsync("Sqlite", 200);
        await using var server = await RunningServer.StartAsync(databases.Server, curve: ZeroMqCurve.ServerCertificate(folder));
        var engine = new FakeBuildEngine();
        var client = Client(pipelined: true, server.Endpoint, databases, engine, totalBatches: 2, batchSize: 100);
        client.MaxReconnects = 1;
        Assert.IsFalse(await Task.Run(client.Execute), engine.Log);
        // NetMQ reports no failed handshake, only the connection it drops: a lost connection, given up after its reconnects.
        Assert.AreEqual((0L, ErrorCodes.ConnectionLost), (client.Records, engine.Errors.First().Code), engine.Log);
    }

    [TestMethod]
    [Timeout(400_000, CooperativeCancellation = true)] // two small RunAlls
    public void RunAll_measures_what_Curve_costs_beside_plaintext_and_leaves_ZeroMQ_out_of_mutual_TLS()
    {
        using var artifacts = new TempDirectory("it-curve-runall-");
        var (exitCode, output) = HostingTests.RunBuild("RunAll", artifacts, "-p:Transports=ZeroMqDealer+PipelinedCopy", "-p:Tls=false+true",
            "-p:RecordCounts=2000", "-p:Repetitions=2", "-p:Warmup=false", "-p:Peers=false");
        Assert.AreEqual(0, exitCode, output);
        var runs = IntegrationTasks.Transfer.MeasurementLog.Read(Path.Combine(artifacts, "results", "runs.jsonl"));
        Assert.AreEqual((2, 2), (runs.Count(r => r is { Transport: "ZeroMqDealer", Verified: true } && !r.Key.Tls), runs.Count(r => r is { Transport: "ZeroMqDealer", Verified: true } && r.Key.Tls)),
            string.Join("\n", runs));
        var results = ResultsJson.Load(Path.Combine(artifacts, "results"));
        Assert.IsTrue(results.HasRow("ZeroMqDealer") && results.HasRow("ZeroMqDealer (TLS)"), output);

        using var mutual = new TempDirectory("it-curve-mutual-");
        (exitCode, output) = HostingTests.RunBuild("RunAll", mutual, "-p:Transports=ZeroMqDealer+PipelinedCopy", "-p:Tls=true", "-p:ClientCertificates=true",
            "-p:RecordCounts=2000", "-p:Repetitions=1", "-p:Warmup=false", "-p:Peers=false");
        Assert.AreEqual(0, exitCode, output);
        Assert.AreEqual("Run it with ClientCertificates=false", ResultsJson.Load(Path.Combine(mutual, "results")).NotRun.Single(n => n.Transport == "ZeroMqDealer").Fix);
        HostingTests.AssertEndedCleanly(artifacts);
    }
}

[TestClass]
[TestCategory("Unit")]
public sealed class ZeroMqLimitTests
{
    [TestMethod]
    [DataRow(1)]
    [DataRow(100_000)]
    public void The_largest_request_a_server_reads_holds_its_largest_batch_of_the_largest_IDs(int maxBatchRecords)
    {
        using var request = new MemoryStream();
        IntegrationTasks.Wire.RecordXml.WriteRequest(request, Enumerable.Range(int.MaxValue - maxBatchRecords + 1, maxBatchRecords));

        Assert.IsLessThanOrEqualTo(IntegrationTasks.Queues.ZeroMq.ZeroMqResponder.MaxRequestBytes(maxBatchRecords), request.Length);
    }
}
