using IntegrationTasks.Common;
using IntegrationTasks.Data;
using IntegrationTasks.Transfer;

namespace IntegrationTasks.Tests;

/// <summary>One client run as several clients at once, each with its own connection and share of the batches.</summary>
[TestClass]
[TestCategory("EndToEnd")]
[DoNotParallelize]
public sealed class ManyClientsTests
{
    [TestMethod]
    [DynamicData(nameof(TcpGeneration.Names), typeof(TcpGeneration))]
    public async Task Eight_clients_at_once_each_move_their_share_and_every_row_arrives_once(string generation)
    {
        await using var databases = TestDatabases.Sqlite();
        await new DataGenerator(databases.Server, NullEventLog.Instance).GenerateAsync(4100, CancellationToken.None);
        await using var server = new RunningTcpServer(databases.Server, TcpGeneration.All[generation]);
        using var folder = new TempDirectory("it-clients-");
        var engine = new FakeBuildEngine();
        var client = TcpGeneration.All[generation].NewClient();
        client.HostName = "127.0.0.1";
        client.Port = server.Port;
        client.Clients = 8;
        client.ResultFile = Path.Combine(folder, "run.json");
        // 41 batches over 8 clients: the first one takes 6, the others 5 — shares that do not divide evenly.
        Assert.IsTrue(client.For(databases, engine, totalBatches: 41, batchSize: 100).Execute(), engine.Log);

        Assert.AreEqual(4100, client.Records);
        var report = await new TransferVerifier(databases.Server, databases.Client).VerifyAsync(4100, CancellationToken.None);
        Assert.IsTrue(report.Success, report.ToString());
        await Eventually.WaitUntilAsync(() => server.Server.ConnectionsServed == 8, "eight connections served, one per client",
            seen: () => $"{server.Server.ConnectionsServed} served");
        var run = MeasurementLog.ReadSingle(client.ResultFile);
        Assert.AreEqual(8, run.Clients);
        Assert.AreEqual(41, run.BatchLatency!.Batches, "every client's batches in the one merged histogram");
        Assert.AreEqual($"{run.Transport} (8 clients)", Results.ReportWriter.Summarise([run with { Repetition = 1 }]).Single().Transport);
    }

    [TestMethod]
    public async Task More_clients_than_batches_or_a_transport_that_runs_one_client_only_is_a_coded_error()
    {
        await using var databases = TestDatabases.Sqlite();
        var engine = new FakeBuildEngine();
        var tcp = new IntegrationTasks.Tcp.TcpClient2 { Clients = 5 }.For(databases, engine, totalBatches: 4, batchSize: 10);
        Assert.IsFalse(tcp.Execute());
        Assert.IsTrue(engine.HasErrorCode(ErrorCodes.InvalidParameter), engine.Log);
        StringAssert.Contains(engine.Log, "each client needs a batch of its own (was 5)");

        engine = new FakeBuildEngine();
        var grpc = new IntegrationTasks.Grpc.GrpcClient { Clients = 2 }.For(databases, engine, totalBatches: 4, batchSize: 10);
        Assert.IsFalse(grpc.Execute());
        StringAssert.Contains(engine.Log, "runs as one client only so far (Clients=2 asked)");
    }
}
