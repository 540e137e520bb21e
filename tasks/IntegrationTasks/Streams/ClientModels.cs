using System.Threading.Channels;
using IntegrationTasks.Transfer;
using IntegrationTasks.Wire;

namespace IntegrationTasks.Streams;

/// <summary>How a client moves its batches over one connection: the only thing that differs between the TCP client generations.</summary>
public abstract class ClientModel
{
    /// <summary>Moves <paramref name="batches"/> (indexes into the plan, ascending), marking each in <paramref name="committed"/> once its transaction commits.</summary>
    public abstract Task RunAsync(FrameConnection frames, BatchPlan plan, IReadOnlyList<int> batches, CommittedBatches committed, BatchImporter importer,
        CancellationToken cancellationToken);

    /// <summary>The request frame for one batch; tagged frames carry the batch number (1-based).</summary>
    protected static ReadOnlyMemory<byte> BuildRequest(PooledBufferStream buffer, BatchPlan plan, int batch, FrameFormat format)
    {
        FrameCodec.BeginFrame(buffer, format);
        RecordXml.WriteRequest(buffer, plan.Ids(batch));
        return FrameCodec.EndFrame(buffer, format, batch + 1);
    }

    protected static IntegrationException EndedEarly(int received, int expected) => new TransferEndedEarlyException(received, expected);
}

/// <summary>The server closed the connection cleanly before every response came: a break a resuming client reconnects after.</summary>
public sealed class TransferEndedEarlyException(int received, int expected)
    : IntegrationException(ErrorCodes.TransferFailed, $"The server ended the transfer after {received} of {expected} responses.");

/// <summary>
/// The series' TcpClientSingleThreadTest (import inline: send, receive, import, next) and
/// TcpClientMultiThreadTest (import on a second loop behind a bounded hand-off of 10 responses, the
/// series' threshold). Either way one request is on the network at a time. Unlike the series, the
/// import loop is awaited to the last batch, never aborted.
/// </summary>
public sealed class LockStepClientModel(bool importOnWorker, int handOff = 10) : ClientModel
{
    public override async Task RunAsync(FrameConnection frames, BatchPlan plan, IReadOnlyList<int> batches, CommittedBatches committed, BatchImporter importer,
        CancellationToken cancellationToken)
    {
        if (!importOnWorker)
        {
            await ExchangeAllAsync(frames, plan, batches, committed.Latency, async (batch, frame, token) =>
            {
                using (frame)
                using (var body = frame.OpenRead())
                    await importer.ImportAsync(body, token).ConfigureAwait(false);
                committed.Add(batch);
            }, cancellationToken).ConfigureAwait(false);
            return;
        }

        using var cancellation = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        var responses = Channel.CreateBounded<(int Batch, Frame Frame)>(new BoundedChannelOptions(handOff) { SingleReader = true, SingleWriter = true });
        try
        {
            async Task NetworkAsync()
            {
                await ExchangeAllAsync(frames, plan, batches, committed.Latency, (batch, frame, token) => responses.Writer.WriteAsync((batch, frame), token), cancellation.Token)
                    .ConfigureAwait(false);
                responses.Writer.Complete();
            }

            async Task ImportAsync()
            {
                await foreach (var (batch, frame) in responses.Reader.ReadAllAsync(cancellation.Token).ConfigureAwait(false))
                {
                    using (frame)
                    using (var body = frame.OpenRead())
                        await importer.ImportAsync(body, cancellation.Token).ConfigureAwait(false);
                    committed.Add(batch);
                }
            }

            await TaskGroup.WhenAllOrFirstFailure(cancellation, NetworkAsync(), ImportAsync()).ConfigureAwait(false);
        }
        finally
        {
            while (responses.Reader.TryRead(out var left))
                left.Frame.Dispose();
        }
    }

    private static async Task ExchangeAllAsync(FrameConnection frames, BatchPlan plan, IReadOnlyList<int> batches, BatchLatency latency,
        Func<int, Frame, CancellationToken, ValueTask> handle, CancellationToken cancellationToken)
    {
        using var buffer = new PooledBufferStream();
        for (var i = 0; i < batches.Count; i++)
        {
            await latency.SendTurnAsync(batches[i], cancellationToken).ConfigureAwait(false);
            await frames.WriteAsync(BuildRequest(buffer, plan, batches[i], frames.Format), cancellationToken).ConfigureAwait(false);
            var response = await frames.ReadAsync(cancellationToken).ConfigureAwait(false) ?? throw EndedEarly(i, batches.Count);
            try
            {
                // A refusal (too many clients) is told here, before the next request meets the closed connection.
                RecordXml.ThrowIfRefusal(response.Memory);
            }
            catch
            {
                response.Dispose();
                throw;
            }
            latency.Received(batches[i]);
            await handle(batches[i], response, cancellationToken).ConfigureAwait(false);
        }
        await frames.WriteEndAsync(cancellationToken).ConfigureAwait(false);
    }
}

/// <summary>
/// The series' TcpClientMultiThreadTest2/3/4: requests are sent without waiting for answers while
/// responses stream back and a separate loop imports them. The receiving loop also parses, so one
/// batch is parsed while the one before it is inserted. The number of batches requested but not
/// yet imported is bounded (back-pressure). In the tagged format every response must answer a
/// request still outstanding, in any order; in the plain format they come back in request order.
/// </summary>
public sealed class PipelinedClientModel(int maxInFlight) : ClientModel
{
    public override async Task RunAsync(FrameConnection frames, BatchPlan plan, IReadOnlyList<int> batches, CommittedBatches committed, BatchImporter importer,
        CancellationToken cancellationToken)
    {
        if (maxInFlight < 1)
            throw new IntegrationException(ErrorCodes.InvalidParameter, $"MaxInFlight must be at least 1 (was {maxInFlight}).");
        using var cancellation = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        var token = cancellation.Token;
        using var inFlight = new SemaphoreSlim(maxInFlight);
        var outstanding = new HashSet<int>();
        var responses = Channel.CreateBounded<(int Batch, List<ServiceRecord> Records)>(new BoundedChannelOptions(maxInFlight) { SingleReader = true, SingleWriter = true });

        async Task SendAsync()
        {
            using var buffer = new PooledBufferStream();
            foreach (var batch in batches)
            {
                await inFlight.WaitAsync(token).ConfigureAwait(false);
                lock (outstanding)
                    outstanding.Add(batch + 1);
                await committed.Latency.SendTurnAsync(batch, token).ConfigureAwait(false);
                await frames.WriteAsync(BuildRequest(buffer, plan, batch, frames.Format), token).ConfigureAwait(false);
            }
            await frames.WriteEndAsync(token).ConfigureAwait(false);
        }

        async Task ReceiveAsync()
        {
            var received = 0;
            // Parsed as it arrives, never held whole; a refusal (too many clients) comes as a frame of no batch and says so with its code.
            while (await frames.ParseAsync(StreamedResponseXml.ReadAsync, token).ConfigureAwait(false) is { } frame)
            {
                var records = frame.Value;
                if (++received > batches.Count || (frames.Format.CarriesBatchId && !TakeOutstanding(frame.BatchId)))
                    throw new IntegrationException(ErrorCodes.TransferFailed,
                        received > batches.Count
                            ? $"The server sent more responses than the {batches.Count} batches requested."
                            : $"The server answered batch {frame.BatchId}, which is not outstanding (never requested, or answered twice).");
                // Tagged frames say which batch they answer; plain ones come back in the order asked.
                var batch = frames.Format.CarriesBatchId ? frame.BatchId - 1 : batches[received - 1];
                committed.Latency.Received(batch);
                await responses.Writer.WriteAsync((batch, records), token).ConfigureAwait(false);
            }
            if (received < batches.Count)
                throw EndedEarly(received, batches.Count);
            responses.Writer.Complete();
        }

        bool TakeOutstanding(int batchId)
        {
            lock (outstanding)
                return outstanding.Remove(batchId);
        }

        async Task ImportAsync()
        {
            await foreach (var (batch, records) in responses.Reader.ReadAllAsync(token).ConfigureAwait(false))
            {
                await importer.ImportAsync(records, token).ConfigureAwait(false);
                committed.Add(batch);
                inFlight.Release();
            }
        }

        await TaskGroup.WhenAllOrFirstFailure(cancellation, SendAsync(), ReceiveAsync(), ImportAsync()).ConfigureAwait(false);
    }
}
