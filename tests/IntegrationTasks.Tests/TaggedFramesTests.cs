namespace IntegrationTasks.Tests;

/// <summary>TCP 3's defining trait: responses matched to requests by batch id, in any order.</summary>
[TestClass]
[TestCategory("Unit")]
public sealed class TaggedFramesTests
{
    /// <summary>A scripted server: reads every tagged request, then answers them in the order the script chooses.</summary>
    private static async Task ScriptedServerAsync(TcpListener listener, Func<List<Frame>, IEnumerable<(int BatchId, Frame Request)>> order)
    {
        using var client = await listener.AcceptTcpClientAsync();
        var stream = client.GetStream();
        var requests = new List<Frame>();
        while (await FrameCodec.ReadAsync(stream, FrameFormat.Tagged, 1 << 20, CancellationToken.None) is { } frame)
            requests.Add(frame);
        using var buffer = new PooledBufferStream();
        foreach (var (batchId, request) in order(requests))
        {
            FrameCodec.BeginFrame(buffer, FrameFormat.Tagged);
            RecordXml.WriteResponse(buffer, (await RecordXml.ReadRequestAsync(request.OpenRead())).Select(id => SampleData.Create(id)));
            await stream.WriteAsync(FrameCodec.EndFrame(buffer, FrameFormat.Tagged, batchId));
        }
        await stream.WriteAsync(FrameFormat.Tagged.EndMarker());
        requests.ForEach(r => r.Dispose());
    }

    private static TcpClientMultiThreadTest3 Client(DisposableSqlite databases, TcpListener listener, FakeBuildEngine engine) => new()
    {
        BuildEngine = engine, ClientConnString = databases.Value.Client.ConnectionString,
        Port = ((IPEndPoint)listener.LocalEndpoint).Port, TotalBatches = 5, BatchSize = 20, MaxInFlight = 5, TimeoutSeconds = 60,
    };

    [TestMethod]
    public async Task Responses_in_reverse_order_are_all_imported()
    {
        using var databases = new DisposableSqlite();
        await new DataGenerator(databases.Value.Server, NullEventLog.Instance).GenerateAsync(100, CancellationToken.None);
        using var listener = new TcpListener(IPAddress.Loopback, 0);
        listener.Start();
        var server = ScriptedServerAsync(listener, requests => requests.Select(r => (r.BatchId, r)).Reverse());
        var engine = new FakeBuildEngine();
        Assert.IsTrue(await Task.Run(Client(databases, listener, engine).Execute), engine.Log);
        await server;
        await new TransferVerifier(databases.Value.Server, databases.Value.Client).VerifyAsync(100, CancellationToken.None);
    }

    [TestMethod]
    public async Task A_response_to_a_batch_already_answered_is_refused()
    {
        using var databases = new DisposableSqlite();
        using var listener = new TcpListener(IPAddress.Loopback, 0);
        listener.Start();
        var server = ScriptedServerAsync(listener, requests => requests.Select(r => (1, r))); // every answer claims batch 1
        var engine = new FakeBuildEngine();
        Assert.IsFalse(await Task.Run(Client(databases, listener, engine).Execute));
        Assert.IsTrue(engine.HasErrorCode(ErrorCodes.TransferFailed), engine.Log);
        StringAssert.Contains(engine.Log, "batch 1, which is not outstanding");
        await server.ContinueWith(_ => { }); // the client may hang up first
    }
}
