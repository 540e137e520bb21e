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
[HostModule("grpc")]
internal sealed class GrpcModule(HostArguments arguments) : IHostModule
{
    private RecordSource _source = null!;
    private IntegrationTestsService _service = null!;


    public string Describe() => $"HTTP/2, {_source.Work}, {_source.Database.Describe()}";

    public async Task ConfigureAsync(WebApplicationBuilder builder, CancellationToken cancellationToken)
    {
        var maxMessageBytes = (int)arguments.Number("--max-message-bytes", 64L * 1024 * 1024);
        _source = await arguments.OpenRecordSourceAsync(cancellationToken);
        _service = await IntegrationTestsService.OpenAsync(_source, (int)arguments.Number("--connections", 8), (int)arguments.Number("--answerers", SettingDefaults.Answerers),
            (int)arguments.Number("--max-batch-records", SettingDefaults.MaxBatchRecords), cancellationToken);
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
        CheckedMessages.Log = app.Logger;
        app.Use(LogUncodedRefusalsAsync);
        app.MapGrpcService<RecordsGrpcService>();
    }

    /// <summary>
    /// A call the framework refused before the service saw it (a message over the size limit, say) got its status without a log
    /// line: each such refusal is one coded line here. The service's own refusals carry a code already and are logged where made.
    /// </summary>
    private static async Task LogUncodedRefusalsAsync(HttpContext context, Func<Task> next)
    {
        await next();
        var trailers = context.Features.Get<Microsoft.AspNetCore.Http.Features.IHttpResponseTrailersFeature>()?.Trailers;
        // A call refused before any message went out carries its status in the headers ("trailers-only").
        var status = trailers?["grpc-status"] is { Count: > 0 } inTrailers ? inTrailers : context.Response.Headers["grpc-status"];
        var detail = trailers?["grpc-message"] is { Count: > 0 } messageInTrailers ? messageInTrailers : context.Response.Headers["grpc-message"];
        if (!int.TryParse(status, out var code) || code == (int)StatusCode.OK || code == (int)StatusCode.Cancelled)
            return;
        var text = Uri.UnescapeDataString(detail.ToString());
        if (CodedError.TryParse(text, out _, out _))
            return;
        var itCode = (StatusCode)code == StatusCode.ResourceExhausted ? ErrorCodes.FrameTooLarge : ErrorCodes.RequestRefused;
        context.RequestServices.GetRequiredService<ILogger<GrpcModule>>().LogWarning("{Code}: refused a gRPC call to {Path} from {Peer} with {Status}: {Detail}",
            itCode, context.Request.Path, context.Connection.RemoteIpAddress, (StatusCode)code, text);
    }
}

/// <summary>
/// The request message's marshaller, checked: bytes that are no BatchRequest end the call with INVALID_ARGUMENT and a coded
/// detail and log line. The generated one let the parser's exception out of the framework as UNKNOWN "Exception was thrown by
/// handler", logged as an uncoded failure.
/// </summary>
internal static class CheckedMessages
{
    public static ILogger Log { get; set; } = Microsoft.Extensions.Logging.Abstractions.NullLogger.Instance;

    public static readonly Marshaller<BatchRequest> Request = Marshallers.Create(Serialize, context =>
    {
        try
        {
            return BatchRequest.Parser.ParseFrom(context.PayloadAsReadOnlySequence());
        }
        catch (Google.Protobuf.InvalidProtocolBufferException e)
        {
            var reason = CodedError.Format(ErrorCodes.MalformedXml, $"The request is not a BatchRequest message (records.proto): {e.Message}");
            Log.LogWarning("{Reason} Refused with InvalidArgument.", reason);
            throw new RpcException(new Status(StatusCode.InvalidArgument, reason));
        }
    });

    public static readonly Marshaller<BatchReply> Reply = Marshallers.Create(Serialize, context => BatchReply.Parser.ParseFrom(context.PayloadAsReadOnlySequence()));

    private static void Serialize<T>(T message, SerializationContext context) where T : Google.Protobuf.IBufferMessage
    {
        context.SetPayloadLength(message.CalculateSize());
        Google.Protobuf.MessageExtensions.WriteTo(message, context.GetBufferWriter());
        context.Complete();
    }
}

internal sealed record GrpcLimits(int MaxMessageBytes);

/// <summary>The two calls of records.proto, answered from the suite's service; bound with <see cref="CheckedMessages"/>.</summary>
[BindServiceMethod(typeof(RecordsGrpcService), nameof(BindService))]
// Not derived from the generated RecordServiceBase, and not sealed: the framework binds the handlers it finds by name only if they are
// virtual methods first declared on the type that carries the binding attribute.
internal class RecordsGrpcService(IntegrationTestsService service, GrpcLimits limits, ILogger<RecordsGrpcService> log)
{
    /// <summary>records.proto's two methods, with the checked request marshaller (the framework finds the handlers by name).</summary>
    public static void BindService(ServiceBinderBase binder, RecordsGrpcService? service)
    {
        var name = RecordService.Descriptor.FullName;
        binder.AddMethod(new Method<BatchRequest, BatchReply>(MethodType.Unary, name, "GetBatch", CheckedMessages.Request, CheckedMessages.Reply),
            service is null ? null : new UnaryServerMethod<BatchRequest, BatchReply>(service.GetBatch));
        binder.AddMethod(new Method<BatchRequest, BatchReply>(MethodType.DuplexStreaming, name, "StreamBatches", CheckedMessages.Request, CheckedMessages.Reply),
            service is null ? null : new DuplexStreamingServerMethod<BatchRequest, BatchReply>(service.StreamBatches));
    }

    public virtual async Task<BatchReply> GetBatch(BatchRequest request, ServerCallContext context) =>
        await AnswerAsync(request, context.CancellationToken);

    public virtual async Task StreamBatches(IAsyncStreamReader<BatchRequest> requests, IServerStreamWriter<BatchReply> replies, ServerCallContext context)
    {
        try
        {
            // In order, one at a time: while the client imports a reply, the next request's lookups run; HTTP/2 flow control holds us back.
            await using var reading = requests.ReadAllAsync(context.CancellationToken).GetAsyncEnumerator(context.CancellationToken);
            while (await NextRequestAsync(reading))
            {
                var request = reading.Current;
                var reply = await AnswerAsync(request, context.CancellationToken);
                try
                {
                    await replies.WriteAsync(reply, context.CancellationToken);
                }
                catch (InvalidOperationException e)
                {
                    // gRPC's word for a write after the client reset the stream ("the request is complete"): the stream is gone.
                    throw new IOException($"The reply could not be written: {e.Message}", e);
                }
            }
        }
        // A stream the client resets can also surface as an IOException before the call's token is cancelled (it was logged uncoded).
        catch (Exception e) when (e is IOException || (context.CancellationToken.IsCancellationRequested && e is OperationCanceledException))
        {
            log.LogWarning("{Code}: the stream from {Peer} was cancelled halfway.", ErrorCodes.ConnectionLost, context.Peer);
            throw new RpcException(new Status(StatusCode.Cancelled, CodedError.Format(ErrorCodes.ConnectionLost, "The stream was cancelled.")));
        }
    }

    /// <summary>The next request; a read after the client reset the stream is gRPC's InvalidOperationException, here the stream gone.</summary>
    private static async ValueTask<bool> NextRequestAsync(IAsyncEnumerator<BatchRequest> reading)
    {
        try
        {
            return await reading.MoveNextAsync();
        }
        catch (InvalidOperationException e)
        {
            throw new IOException($"The next request could not be read: {e.Message}", e);
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
