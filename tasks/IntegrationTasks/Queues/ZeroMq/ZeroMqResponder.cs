using IntegrationTasks.Data;
using IntegrationTasks.Transfer;
using IntegrationTasks.Wire;
using NetMQ;
using NetMQ.Sockets;

namespace IntegrationTasks.Queues.ZeroMq;

/// <summary>
/// The ZeroMQ server: a ROUTER socket bound to its endpoint, no broker between it and its clients. It answers one request at a time
/// with the source's lookups (as the broker transports' servers do), to whichever client sent it — a REQ client in lock-step or a
/// DEALER client with batches pipelined. What it cannot answer gets a coded refusal in the reply's status frame, so the client fails
/// fast; a request larger than <see cref="MaxMessageBytes"/> is never read (ZeroMQ drops that peer) and the others go on.
/// </summary>
public sealed class ZeroMqResponder(RecordSource source, string endpoint, IEventLog log)
{
    /// <summary>Messages queued for one peer each way: four times the batches a client keeps asked for by default (MaxInFlight).</summary>
    public const int HighWatermark = 4 * SettingDefaults.MaxInFlight;

    /// <summary>The largest request of <paramref name="maxBatchRecords"/> IDs (each "&lt;id&gt;…&lt;/id&gt;", at most 20 bytes) with its XML around them.</summary>
    public static long MaxRequestBytes(int maxBatchRecords) => 20L * maxBatchRecords + 1024;

    public int MaxMessageBytes { get; init; } = SettingDefaults.MaxFrameBytes;
    public int MaxBatchRecords { get; init; } = SettingDefaults.MaxBatchRecords;

    /// <summary>CurveZMQ with this key pair (<see cref="ZeroMqCurve"/>); null: plaintext.</summary>
    public NetMQCertificate? Curve { get; init; }

    private long _answered;
    private long _refused;

    public long Answered => Interlocked.Read(ref _answered);
    public long Refused => Interlocked.Read(ref _refused);

    /// <summary>Binds (a taken port fails here, IT4001), then returns the serving loop: it ends once its token is cancelled.</summary>
    public async Task<Func<CancellationToken, Task>> StartAsync(CancellationToken cancellationToken)
    {
        var lookup = await source.OpenLookupAsync(cancellationToken).ConfigureAwait(false);
        var bound = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var stopping = new CancellationTokenSource();
        var serving = SocketThread.RunAsync("ZeroMQ server", () => new RouterSocket(), router => ServeAsync(router, lookup, bound, stopping.Token));
        try
        {
            await Task.WhenAny(bound.Task, serving).WaitAsync(cancellationToken).ConfigureAwait(false);
            if (!bound.Task.IsCompleted)
            {
                // The socket's thread ended before binding: its own failure, or this.
                await serving.ConfigureAwait(false);
                throw new IntegrationException(ErrorCodes.Unexpected, $"The ZeroMQ server ended before it bound {endpoint}.");
            }
            await bound.Task.ConfigureAwait(false);
        }
        catch
        {
            await stopping.CancelAsync().ConfigureAwait(false);
            await serving.ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing);
            await lookup.DisposeAsync().ConfigureAwait(false);
            stopping.Dispose();
            throw;
        }
        return async stop =>
        {
            await stop.WhenCancelledAsync().ConfigureAwait(false);
            await stopping.CancelAsync().ConfigureAwait(false);
            await serving.ConfigureAwait(false);
            await lookup.DisposeAsync().ConfigureAwait(false);
            stopping.Dispose();
        };
    }

    // Runs on the socket's thread: every await comes back to it (ConfigureAwait(true)), where the socket may be used.
    // The stop is posted to the socket's thread: NetMQ's cancellation of a receive touches the socket.
    private async Task ServeAsync(RouterSocket router, RecordLookup lookup, TaskCompletionSource bound, CancellationToken stopping)
    {
        var thread = new SocketThreadContext(SynchronizationContext.Current!);
        using var stop = stopping.Register(() => thread.Post(thread.CancelReceive));
        try
        {
            // What one peer can make the server hold: a request no larger than MaxBatchRecords IDs can be (a bigger one drops the
            // peer), and a bounded queue each way (ZeroMQ's default is 1,000 messages a peer).
            router.Options.MaxMsgSize = Math.Min(MaxMessageBytes, MaxRequestBytes(MaxBatchRecords));
            router.Options.ReceiveHighWatermark = HighWatermark;
            router.Options.SendHighWatermark = HighWatermark;
            if (Curve is { } curve)
            {
                router.Options.CurveServer = true;
                router.Options.CurveCertificate = curve;
            }
            router.Bind(endpoint);
        }
        catch (Exception e)
        {
            bound.TrySetException(e is NetMQException
                ? new IntegrationException(ErrorCodes.PortInUse, $"ZeroMQ cannot bind {endpoint}: {e.Message}", e)
                : new IntegrationException(ErrorCodes.Unexpected, $"ZeroMQ cannot bind {endpoint}: {e.Message}", e));
            thread.Close();
            return;
        }
        bound.TrySetResult();
        try
        {
            await ServeRequestsAsync(router, lookup, thread, stopping).ConfigureAwait(true);
        }
        finally
        {
            thread.Close();
        }
    }

    private async Task ServeRequestsAsync(RouterSocket router, RecordLookup lookup, SocketThreadContext thread, CancellationToken stopping)
    {
        while (!stopping.IsCancellationRequested)
        {
            NetMQMessage request;
            try
            {
                request = await router.ReceiveMultipartMessageAsync(3, thread.ReceiveToken).ConfigureAwait(true);
            }
            catch (OperationCanceledException) when (stopping.IsCancellationRequested)
            {
                return;
            }
            NetMQMessage reply;
            try
            {
                reply = await AnswerAsync(request, lookup, stopping).ConfigureAwait(true);
            }
            catch (OperationCanceledException) when (stopping.IsCancellationRequested)
            {
                return;
            }
            router.SendMultipartMessage(reply);
        }
    }

    private async Task<NetMQMessage> AnswerAsync(NetMQMessage request, RecordLookup lookup, CancellationToken stopping)
    {
        var reply = new NetMQMessage();
        for (var i = 0; i < request.FrameCount - 1; i++)
            reply.Append(request[i]);
        try
        {
            if (request.FrameCount < 2)
                throw new IntegrationException(ErrorCodes.MalformedMessage, "The request has no envelope to answer to.");
            var body = request.Last;
            using var response = new PooledBufferStream();
            using (var stream = new MemoryStream(body.Buffer, 0, body.MessageSize, writable: false))
                await RecordService.AnswerAsync(lookup, stream, response, stopping, MaxBatchRecords).ConfigureAwait(true);
            reply.Append(ZeroMqFrames.Status(null));
            reply.Append(response.WrittenMemory.ToArray());
            Interlocked.Increment(ref _answered);
        }
        catch (Exception e) when (e is not OperationCanceledException)
        {
            // Whatever it was, this request is refused with a code and the server goes on for the others.
            var refusal = e as IntegrationException ?? new IntegrationException(ErrorCodes.Unexpected, e.Message, e);
            Interlocked.Increment(ref _refused);
            log.Warning(refusal.Code, $"Refused a request on {endpoint}: {refusal.Message}");
            reply.Append(ZeroMqFrames.Status(refusal));
            reply.AppendEmptyFrame();
        }
        return reply;
    }
}
