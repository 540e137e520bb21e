using System.Buffers.Binary;
using IntegrationTasks.Streams;

namespace IntegrationTasks.Tests;

/// <summary>The pipelined client and server models over an in-memory connection: no socket, no port, no timing.</summary>
[TestClass]
[TestCategory("Unit")]
public sealed class StreamModelsTests
{
    private static readonly BatchPlan Plan = new(10, 20);

    [TestMethod]
    [DataRow(1, DisplayName = "one answerer, in order")]
    [DataRow(3, DisplayName = "three answerers, any order")]
    public async Task The_pipelined_models_move_every_batch_over_one_connection(int answerers)
    {
        await using var databases = await TransferChecks.WithRecordsAsync("Sqlite", Plan.Records);
        await databases.Client.EnsureSchemaAsync(CancellationToken.None);
        var connection = new InMemoryConnection();
        var serverFrames = FrameConnection.Create(StreamIo.Streams, connection.Server, FrameFormat.Tagged, 1 << 20);
        var server = new PipelinedServerModel(answerers, maxPendingRequests: 4)
            .ServeAsync(new ServerConnection(serverFrames, new RecordSource(databases.Server, ServerWork.PerRecord), TimeSpan.FromMinutes(1)), CancellationToken.None);

        var committed = new CommittedBatches(Plan);
        await using (var importer = await BatchImporter.OpenAsync(databases.Client, CancellationToken.None))
            await new PipelinedClientModel(maxInFlight: 3).RunAsync(FrameConnection.Create(StreamIo.Streams, connection.Client, FrameFormat.Tagged, 1 << 20),
                Plan, [.. Enumerable.Range(0, Plan.TotalBatches)], committed, importer, CancellationToken.None);
        await server.WaitAsync(TimeSpan.FromSeconds(30));

        Assert.IsEmpty(committed.Missing());
        Assert.IsTrue((await new TransferVerifier(databases.Server, databases.Client).VerifyAsync(Plan.Records, CancellationToken.None)).Success);
    }

    public static IEnumerable<object[]> Misbehaviours =>
    [
        ["an answer for a batch never asked for", ErrorCodes.TransferFailed, 2],
        ["the same answer twice", ErrorCodes.TransferFailed, 2],
        ["a break mid-frame", ErrorCodes.TruncatedFrame, 2],
        ["the connection closed after two batches", ErrorCodes.TruncatedFrame, 2],
        ["the transfer ended by the server after two batches", ErrorCodes.TransferFailed, 2],
    ];

    [TestMethod]
    [DynamicData(nameof(Misbehaviours))]
    public async Task A_server_that_misbehaves_fails_the_client_with_its_code_and_only_whole_batches_are_committed(string misbehaviour, string code, int answered)
    {
        await using var databases = TestDatabases.Sqlite();
        await databases.Client.EnsureSchemaAsync(CancellationToken.None);
        var connection = new InMemoryConnection();
        var script = Task.Run(async () =>
        {
            await using var server = connection.Server;
            await Answer(server, 1);
            await Answer(server, 2);
            switch (misbehaviour)
            {
                case "an answer for a batch never asked for":
                    await Answer(server, 99);
                    break;
                case "the same answer twice":
                    break; // batch 2 again below
                case "a break mid-frame":
                    var header = new byte[12];
                    BinaryPrimitives.WriteInt64LittleEndian(header, 1000);
                    BinaryPrimitives.WriteInt32LittleEndian(header.AsSpan(8), 3);
                    await server.WriteAsync(header.Concat(new byte[10]).ToArray());
                    break;
                case "the transfer ended by the server after two batches":
                    await server.WriteAsync(new byte[12]); // the end marker, with eight batches still outstanding
                    break;
            }
            if (misbehaviour == "the same answer twice")
                await Answer(server, 2);
            connection.CloseServerSide();
        });

        var committed = new CommittedBatches(Plan);
        IntegrationException failure;
        await using (var importer = await BatchImporter.OpenAsync(databases.Client, CancellationToken.None))
            failure = await Assert.ThrowsAsync<IntegrationException>(() => new PipelinedClientModel(maxInFlight: 10).RunAsync(
                FrameConnection.Create(StreamIo.Streams, connection.Client, FrameFormat.Tagged, 1 << 20), Plan, [.. Enumerable.Range(0, Plan.TotalBatches)],
                committed, importer, CancellationToken.None));
        await script;

        Assert.AreEqual(code, failure.Code, failure.Message);
        if (misbehaviour == "the transfer ended by the server after two batches")
            Assert.IsInstanceOfType<TransferEndedEarlyException>(failure, "a clean early end is told by its type, not its message");
        // Whole batches only, and exactly those the client counted as committed (the failure may cut the import of answered ones short,
        // never one half-way): so a resumed attempt asks for the rest and nothing twice.
        var committedCount = Plan.TotalBatches - committed.Missing().Count;
        Assert.IsLessThanOrEqualTo(answered, committedCount);
        Assert.AreEqual(committedCount * Plan.BatchSize, await databases.Client.CountAsync(RecordTable.Client, CancellationToken.None));
    }

    [TestMethod]
    public async Task A_client_that_stalls_mid_frame_is_dropped_by_the_server_model_with_IT3007()
    {
        await using var databases = TestDatabases.Sqlite();
        await databases.Server.EnsureSchemaAsync(CancellationToken.None);
        var connection = new InMemoryConnection();
        var serverFrames = FrameConnection.Create(StreamIo.Pipelines, connection.Server, FrameFormat.Plain, 1 << 20);
        var serving = new PipelinedServerModel(1, 4).ServeAsync(
            new ServerConnection(serverFrames, new RecordSource(databases.Server, ServerWork.PerRecord), TimeSpan.FromMilliseconds(200)), CancellationToken.None);
        var header = new byte[8];
        BinaryPrimitives.WriteInt64LittleEndian(header, 100);
        await connection.Client.WriteAsync(header.Concat("<request>"u8.ToArray()).ToArray()); // then nothing more, the connection left open

        var e = await Assert.ThrowsAsync<IntegrationException>(() => serving.WaitAsync(TimeSpan.FromSeconds(30)));
        Assert.AreEqual(ErrorCodes.ConnectionStalled, e.Code);
    }

    /// <summary>A tagged reply frame with the batch's records (1-based batch id), as the server sends it.</summary>
    private static async Task Answer(Stream server, int batchId)
    {
        using var payload = new MemoryStream();
        var first = (batchId - 1) * Plan.BatchSize + 1;
        RecordXml.WriteResponse(payload, Enumerable.Range(first, Plan.BatchSize).Select(id => SampleData.Create(id)));
        var frame = new byte[12 + payload.Length];
        FrameFormat.Tagged.WriteHeader(frame, (int)payload.Length, batchId);
        payload.ToArray().CopyTo(frame, 12);
        await server.WriteAsync(frame);
    }
}
