using Grpc.Core;
using IntegrationTasks.Common;
using IntegrationTasks.Data;
using IntegrationTasks.Grpc;
using IntegrationTasks.Grpc.Contract;
using IntegrationTasks.Wcf;
using Microsoft.AspNetCore.Server.Kestrel.Core;

namespace IntegrationTasks.Host.Grpc;

/// <summary>
/// The gRPC server: HTTP/2 without TLS (the host's endpoint is HTTP/2-only), the same lookups as every other server
/// (<see cref="IntegrationTestsService.LookUpAsync"/>). Arguments: --provider, --connstring, --connections, --answerers,
/// --max-message-bytes, --max-batch-records. A call the service cannot take ends with a status whose detail is coded.
/// </summary>
internal sealed class GrpcModule(HostArguments arguments) : IHostModule
{
    private RecordSource _source = null!;
    private IntegrationTestsService _service = null!;

    public string Name => "grpc";

    public string Describe() => $"HTTP/2, {_source.Work}, {_source.Database.Describe()}";

    public async Task ConfigureAsync(WebApplicationBuilder builder, CancellationToken cancellationToken)
    {
        var maxMessageBytes = (int)arguments.Number("--max-message-bytes", 64L * 1024 * 1024);
        _source = await arguments.OpenRecordSourceAsync(cancellationToken);
        _service = await IntegrationTestsService.OpenAsync(_source, (int)arguments.Number("--connections", 8), (int)arguments.Number("--answerers", 4),
            (int)arguments.Number("--max-batch-records", 100_000), cancellationToken);
        builder.Services.AddSingleton(_service);
        builder.Services.AddSingleton(new GrpcLimits(maxMessageBytes));
        builder.Services.AddGrpc(options =>
        {
            options.MaxReceiveMessageSize = maxMessageBytes;
            options.MaxSendMessageSize = maxMessageBytes;
        });
    }

    /// <summary>gRPC without TLS needs HTTP/2 with prior knowledge: this host's endpoint speaks nothing else.</summary>
    public void ConfigureEndpoint(ListenOptions endpoint) => endpoint.Protocols = HttpProtocols.Http2;

    public void Map(WebApplication app)
    {
        app.Lifetime.ApplicationStopped.Register(() => _service.DisposeAsync().AsTask().GetAwaiter().GetResult());
        app.MapGrpcService<RecordsGrpcService>();
    }
}

internal sealed record GrpcLimits(int MaxMessageBytes);

/// <summary>The two calls of records.proto, answered from the suite's service.</summary>
internal sealed class RecordsGrpcService(IntegrationTestsService service, GrpcLimits limits, ILogger<RecordsGrpcService> log) : RecordService.RecordServiceBase
{
    public override async Task<BatchReply> GetBatch(BatchRequest request, ServerCallContext context) =>
        await AnswerAsync(request, context.CancellationToken);

    public override async Task StreamBatches(IAsyncStreamReader<BatchRequest> requests, IServerStreamWriter<BatchReply> replies, ServerCallContext context)
    {
        try
        {
            // In order, one at a time: while the client imports a reply, the next request's lookups run; HTTP/2 flow control holds us back.
            await foreach (var request in requests.ReadAllAsync(context.CancellationToken))
                await replies.WriteAsync(await AnswerAsync(request, context.CancellationToken), context.CancellationToken);
        }
        catch (Exception e) when (context.CancellationToken.IsCancellationRequested && e is OperationCanceledException or IOException)
        {
            log.LogWarning("{Code}: the stream from {Peer} was cancelled halfway.", ErrorCodes.ConnectionLost, context.Peer);
            throw new RpcException(new Status(StatusCode.Cancelled, CodedError.Format(ErrorCodes.ConnectionLost, "The stream was cancelled.")));
        }
    }

    private async Task<BatchReply> AnswerAsync(BatchRequest request, CancellationToken cancellationToken)
    {
        BatchReply reply;
        try
        {
            reply = RecordMessages.ToReply(request.FirstId, await service.LookUpAsync(request.FirstId, request.Count, concurrently: false, cancellationToken));
        }
        catch (IntegrationException e)
        {
            log.LogWarning("{Code}: refused a gRPC request ({FirstId}, {Count}) with InvalidArgument: {Message}", e.Code, request.FirstId, request.Count, e.Message);
            throw new RpcException(new Status(StatusCode.InvalidArgument, CodedError.Format(e)));
        }
        // Checked here rather than left to the framework, so that the refusal is logged with a code (the framework would refuse it too).
        if (reply.CalculateSize() is var size && size > limits.MaxMessageBytes)
        {
            var message = $"The reply to ({request.FirstId}, {request.Count}) is {size:N0} bytes, over the limit of {limits.MaxMessageBytes:N0} (GrpcMaxMessageBytes); ask for smaller batches.";
            log.LogWarning("{Code}: {Message}", ErrorCodes.FrameTooLarge, message);
            throw new RpcException(new Status(StatusCode.ResourceExhausted, CodedError.Format(ErrorCodes.FrameTooLarge, message)));
        }
        return reply;
    }
}
