using Grpc.Core;
using Grpc.Net.Client;
using IntegrationTasks.Grpc.Contract;
using RecordService = IntegrationTasks.Grpc.Contract.RecordService;

namespace IntegrationTasks.Tests;

[TestClass]
[TestCategory("EndToEnd")]
public sealed class GrpcTransferTests
{
    private static Task<RunningHostModule> StartAsync(TestDatabases databases, int maxMessageBytes = 64 << 20, int maxBatchRecords = 100_000) =>
        RunningHostModule.StartAsync(new GrpcServer { Connections = 4, Answerers = 2, MaxMessageBytes = maxMessageBytes, MaxBatchRecords = maxBatchRecords },
            databases, "");

    private static GrpcClientTask Client(bool streaming, string address, TestDatabases databases, FakeBuildEngine engine, int totalBatches = 4, int batchSize = 250)
    {
        GrpcClientTask client = streaming ? new GrpcStreaming() : new IntegrationTasks.Grpc.GrpcClient();
        client.Address = address;
        client.MaxInFlight = 3;
        return client.For(databases, engine, totalBatches, batchSize);
    }

    [TestMethod]
    [EachVariantOnEachDatabase]
    public Task Both_gRPC_transports_move_every_row_intact(bool streaming, string provider) =>
        TransferChecks.AssertServedEveryRowAsync(provider, 1000, databases => StartAsync(databases),
            (server, databases, engine) => Client(streaming, server.Url, databases, engine));

    [TestMethod]
    [DataRow(false)]
    [DataRow(true)]
    public async Task A_connection_reset_mid_transfer_is_resumed_and_every_row_arrives_once(bool streaming)
    {
        await using var databases = await TransferChecks.WithRecordsAsync("Sqlite", 5000);
        await using var server = await StartAsync(databases);
        await RelayFaults.AssertResumedAfterResetAsync(databases, server.Port,
            (relayPort, engine) => Client(streaming, $"http://127.0.0.1:{relayPort}", databases, engine, totalBatches: 50, batchSize: 100));
    }

    [TestMethod]
    public async Task Bad_gRPC_input_gets_a_status_and_a_good_client_is_still_served()
    {
        await using var databases = await TransferChecks.WithRecordsAsync("Sqlite", 1000);
        await using var server = await StartAsync(databases, maxMessageBytes: 16 * 1024, maxBatchRecords: 300);

        // A plain HTTP/2 request that is not gRPC.
        using (var http = new HttpClient { DefaultRequestVersion = HttpVersion.Version20, DefaultVersionPolicy = HttpVersionPolicy.RequestVersionExact })
        {
            using var response = await http.PostAsync(server.Url + "/integrationtasks.v1.RecordService/GetBatch", new StringContent("hello"));
            Assert.AreEqual(HttpStatusCode.UnsupportedMediaType, response.StatusCode);
        }

        using var channel = GrpcChannel.ForAddress(server.Url);
        var raw = new RecordService.RecordServiceClient(channel);
        // Over the batch quota: InvalidArgument with the service's code.
        var quota = await Assert.ThrowsAsync<RpcException>(async () => await raw.GetBatchAsync(new BatchRequest { FirstId = 1, Count = 301 }));
        Assert.AreEqual(StatusCode.InvalidArgument, quota.StatusCode);
        StringAssert.StartsWith(quota.Status.Detail, "IT1001: count must be between 1 and 300");
        // A reply over the message limit: refused with a status, not sent.
        var oversized = await Assert.ThrowsAsync<RpcException>(async () => await raw.GetBatchAsync(new BatchRequest { FirstId = 1, Count = 300 }));
        Assert.AreEqual(StatusCode.ResourceExhausted, oversized.StatusCode, oversized.ToString());
        StringAssert.StartsWith(oversized.Status.Detail, "IT2101: The reply to (1, 300) is");
        // A truncated gRPC message: its length prefix promises 100 bytes, the request ends after 2.
        using (var http = new HttpClient { DefaultRequestVersion = HttpVersion.Version20, DefaultVersionPolicy = HttpVersionPolicy.RequestVersionExact })
        {
            var body = new ByteArrayContent([0, 0, 0, 0, 100, 8, 1]);
            body.Headers.ContentType = new System.Net.Http.Headers.MediaTypeHeaderValue("application/grpc");
            using var request = new HttpRequestMessage(HttpMethod.Post, server.Url + "/integrationtasks.v1.RecordService/GetBatch") { Content = body };
            request.Headers.TE.ParseAdd("trailers");
            using var response = await http.SendAsync(request);
            await response.Content.ReadAsByteArrayAsync();
            var status = response.TrailingHeaders.TryGetValues("grpc-status", out var values) ? values.Single()
                : response.Headers.TryGetValues("grpc-status", out values) ? values.Single() : "(none)";
            // Refused: a gRPC status other than OK, or an HTTP error — never an OK answer.
            Assert.IsFalse(response.IsSuccessStatusCode && status is "0" or "(none)",
                $"a truncated message was answered {(int)response.StatusCode} with grpc-status {status}");
        }
        // A stream cancelled halfway.
        using (var cancel = new CancellationTokenSource())
        {
            using var call = raw.StreamBatches(cancellationToken: cancel.Token);
            await call.RequestStream.WriteAsync(new BatchRequest { FirstId = 1, Count = 10 });
            Assert.IsTrue(await call.ResponseStream.MoveNext(CancellationToken.None));
            await cancel.CancelAsync();
            await Assert.ThrowsAsync<RpcException>(async () => await call.ResponseStream.MoveNext(CancellationToken.None));
        }
        // The task reports the quota refusal with the service's code.
        var engine = new FakeBuildEngine();
        Assert.IsFalse(await Task.Run(Client(false, server.Url, databases, engine, 2, 500).Execute));
        Assert.IsTrue(engine.HasErrorCode(ErrorCodes.InvalidParameter), engine.Log);

        // …and a good client is still served (small batches, under the message limit).
        await databases.Client.EmptyAsync(RecordTable.Client, CancellationToken.None);
        engine = new FakeBuildEngine();
        Assert.IsTrue(await Task.Run(Client(true, server.Url, databases, engine, 20, 50).Execute), engine.Log);
        await new TransferVerifier(databases.Server, databases.Client).VerifyAsync(1000, CancellationToken.None);
        StringAssert.Contains(server.Log, "IT1001");
        StringAssert.Contains(server.Log, "IT2101");
        await Eventually.WaitUntilAsync(() => server.Log.Contains("warning IT3006", StringComparison.Ordinal), "IT3006 for the stream cancelled halfway",
            seen: () => server.Log);
    }

    [TestMethod]
    public async Task A_malformed_or_oversized_gRPC_message_gets_its_status_and_one_coded_log_line()
    {
        await using var databases = await TransferChecks.WithRecordsAsync("Sqlite", 100);
        await using var server = await StartAsync(databases, maxMessageBytes: 16 * 1024);
        using var channel = GrpcChannel.ForAddress(server.Url, new GrpcChannelOptions { MaxSendMessageSize = null });
        var bytes = new Marshaller<byte[]>(b => b, b => b);
        var invoker = channel.CreateCallInvoker();

        // Bytes that are no BatchRequest: was UNKNOWN "Exception was thrown by handler" and uncoded fail: lines.
        foreach (var garbage in new[] { Enumerable.Repeat((byte)0xFF, 100).ToArray(), [0x0A, 0x80] })
        {
            var unary = new Method<byte[], byte[]>(MethodType.Unary, RecordService.Descriptor.FullName, "GetBatch", bytes, bytes);
            var malformed = await Assert.ThrowsAsync<RpcException>(async () => await invoker.AsyncUnaryCall(unary, null, new CallOptions(), garbage));
            Assert.AreEqual(StatusCode.InvalidArgument, malformed.StatusCode, malformed.ToString());
            StringAssert.StartsWith(malformed.Status.Detail, "IT2001: The request is not a BatchRequest message");
        }
        var duplex = new Method<byte[], byte[]>(MethodType.DuplexStreaming, RecordService.Descriptor.FullName, "StreamBatches", bytes, bytes);
        using (var call = invoker.AsyncDuplexStreamingCall(duplex, null, new CallOptions()))
        {
            await call.RequestStream.WriteAsync(Enumerable.Repeat((byte)0xFF, 100).ToArray());
            var malformed = await Assert.ThrowsAsync<RpcException>(async () => await call.ResponseStream.MoveNext(CancellationToken.None));
            Assert.AreEqual(StatusCode.InvalidArgument, malformed.StatusCode, malformed.ToString());
        }

        // Over the server's message limit: RESOURCE_EXHAUSTED, as before, but no longer without a log line.
        var big = new Method<byte[], byte[]>(MethodType.Unary, RecordService.Descriptor.FullName, "GetBatch", bytes, bytes);
        var oversized = await Assert.ThrowsAsync<RpcException>(async () => await invoker.AsyncUnaryCall(big, null, new CallOptions(), new byte[64 * 1024]));
        Assert.AreEqual(StatusCode.ResourceExhausted, oversized.StatusCode, oversized.ToString());

        // A good call still answered.
        var reply = await new RecordService.RecordServiceClient(channel).GetBatchAsync(new BatchRequest { FirstId = 1, Count = 2 });
        Assert.HasCount(2, reply.Records);

        await Eventually.WaitUntilAsync(() => server.Log.Split('\n').Count(l => l.StartsWith("warning IT2001:", StringComparison.Ordinal)) == 3
            && server.Log.Split('\n').Any(l => l.StartsWith("warning IT2101:", StringComparison.Ordinal) && l.Contains("ResourceExhausted", StringComparison.Ordinal)),
            "three IT2001 lines and one IT2101 for the oversized message", seen: () => server.Log);
        Assert.DoesNotContain("fail:", server.Log);
    }

    [TestMethod]
    public async Task Without_a_server_a_gRPC_client_fails_at_once_with_a_coded_error()
    {
        await using var databases = TestDatabases.Sqlite();
        foreach (var streaming in new[] { false, true })
        {
            var engine = new FakeBuildEngine();
            var run = Task.Run(Client(streaming, $"http://127.0.0.1:{TestPorts.Free()}", databases, engine).Execute);
            Assert.IsFalse(await run.WaitAsync(TimeSpan.FromSeconds(60)));
            Assert.IsTrue(engine.HasErrorCode(ErrorCodes.ConnectionFailed), engine.Log);
        }
    }
}
