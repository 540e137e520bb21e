using System.Threading.Channels;
using IntegrationTasks.Data;
using IntegrationTasks.Transfer;
using IntegrationTasks.Wire;

namespace IntegrationTasks.Streams;

/// <summary>A request as read off the wire: its batch id and the IDs it asks for (the frame itself is already given back).</summary>
public sealed record BatchRequest(int BatchId, IReadOnlyList<int> Ids);

/// <summary>A reply ready to send, holding its share of the connection's record budget until it is disposed.</summary>
public sealed class Reply(FrameBuilder frame, WeightedBudget.Lease lease) : IDisposable
{
    public FrameBuilder Frame { get; } = frame;

    public void Dispose()
    {
        Frame.Dispose();
        lease.Dispose();
    }
}

/// <summary>One accepted connection, with what every threading model needs to answer its requests.</summary>
public sealed class ServerConnection(FrameConnection frames, RecordSource source, TimeSpan timeout, int maxBatchRecords = int.MaxValue)
{
    private int _answered;

    /// <summary>Replies being written now: a read that stalls meanwhile is a client that stopped reading, not one that is idle.</summary>
    private int _writing;

    /// <summary>A write timed out: set before the write lets go of <see cref="_writing"/>, so a read guard firing at the same moment tells the same story.</summary>
    private volatile bool _stoppedReading;

    /// <summary>The read under way's deadline: every slice written moves it on, so a client busy reading a long reply is not idle.</summary>
    private readonly StallGuard _reads = new(timeout);

    /// <summary>
    /// Records being answered, queued or sent on this connection: at most one largest request's worth, however many answerers and
    /// pending requests the model has, so a connection holds about one largest reply in memory whatever its client asks.
    /// </summary>
    private readonly WeightedBudget _recordsInFlight = new(maxBatchRecords);

    public FrameConnection Frames { get; } = frames;
    public RecordSource Source { get; } = source;
    public int Answered => Volatile.Read(ref _answered);

    /// <summary>
    /// The next request, or null for the end marker. A client that sends no complete request within the timeout —
    /// idle, or a header or body cut short with the connection left open — is dropped (IT3007), so it cannot hold
    /// a connection and its database work forever. The IDs are parsed as the frame arrives, never held whole, so a
    /// request costs its IDs, not the up to MaxFrameBytes its frame may take; one asking for more than
    /// MaxBatchRecords is refused (IT2005) while it is read, before any work.
    /// </summary>
    public async ValueTask<BatchRequest?> ReadRequestAsync(CancellationToken cancellationToken)
    {
        try
        {
            var request = await _reads.WithinAsync(token => Frames.ParseAsync(ReadIdsAsync, token),
                () => $"No complete request within {timeout.TotalSeconds:0.#} s after {Answered} answered (idle, or stalled mid-frame); see ConnectionTimeoutSeconds.",
                cancellationToken).ConfigureAwait(false);
            return request is { } read ? new BatchRequest(read.BatchId, read.Value) : null;
        }
        catch (IntegrationException e) when (e.Code == ErrorCodes.ConnectionStalled && (Volatile.Read(ref _writing) > 0 || _stoppedReading))
        {
            // The read guard can speak before the write guard: either way, a reply is stuck behind a client that does not read.
            throw StoppedReading();
        }
    }

    private PeerStoppedReadingException StoppedReading() =>
        new($"The client read nothing for {timeout.TotalSeconds:0.#} s after {Answered} answered (it stopped reading its replies); see ConnectionTimeoutSeconds.");

    private async Task<List<int>> ReadIdsAsync(Stream payload, CancellationToken cancellationToken) =>
        await RecordXml.ReadRequestAsync(payload, maxBatchRecords, cancellationToken).ConfigureAwait(false);

    /// <summary>
    /// Writes a frame to the client, segment by segment (each at most <see cref="FrameBuilder.SegmentBytes"/>), each within the timeout:
    /// a client that reads nothing for that long — it sends requests and never reads the replies — is dropped (IT3007), while one
    /// that reads slowly but steadily is never cut. The read guard alone let a non-reader hold the connection, its buffers and its workers.
    /// </summary>
    public async ValueTask WriteAsync(IEnumerable<ReadOnlyMemory<byte>> segments, CancellationToken cancellationToken)
    {
        // One deadline for the frame, moved on before each segment (not a new one per segment: this is every reply's path).
        using var deadline = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        Interlocked.Increment(ref _writing);
        try
        {
            foreach (var segment in segments)
            {
                deadline.CancelAfter(timeout);
                await Frames.WriteAsync(segment, deadline.Token).ConfigureAwait(false);
                _reads.Progressed();
            }
        }
        catch (OperationCanceledException) when (!cancellationToken.IsCancellationRequested)
        {
            _stoppedReading = true;
            throw StoppedReading();
        }
        finally
        {
            Interlocked.Decrement(ref _writing);
        }
    }

    public ValueTask WriteAsync(Reply reply, CancellationToken cancellationToken) => WriteAsync(reply.Frame.Segments, cancellationToken);

    public ValueTask WriteEndAsync(CancellationToken cancellationToken) => WriteAsync([Frames.Format.EndMarker()], cancellationToken);

    /// <summary>
    /// A request in, its reply out (tagged with the request's batch id), once its records fit in the connection's budget. The client
    /// accepts frames up to MaxFrameBytes: a reply that grows past it is refused (IT2101) as it does, never sent.
    /// </summary>
    public async Task<Reply> AnswerAsync(RecordLookup lookup, BatchRequest request, CancellationToken cancellationToken)
    {
        var lease = await _recordsInFlight.TakeAsync(request.Ids.Count, cancellationToken).ConfigureAwait(false);
        var frame = new FrameBuilder(Frames.Format, Frames.MaxFrameBytes, $"The response to batch {request.BatchId}");
        // The client waits while its reply is made (a large one from a busy database can take longer than the timeout).
        _reads.Hold();
        try
        {
            await RecordService.AnswerAsync(lookup, request.Ids, frame, afterRecord: null, cancellationToken).ConfigureAwait(false);
            frame.Complete(request.BatchId);
            Interlocked.Increment(ref _answered);
            return new Reply(frame, lease);
        }
        catch
        {
            frame.Dispose();
            lease.Dispose();
            throw;
        }
        finally
        {
            _reads.Release();
        }
    }
}

/// <summary>How a server works one connection: the only thing that differs between the TCP server generations.</summary>
public abstract class ServerModel
{
    public abstract Task ServeAsync(ServerConnection connection, CancellationToken cancellationToken);
}

/// <summary>
/// The series' TcpTestServer: strictly one request at a time — read, answer, write, then read the
/// next. The client's end marker ends the loop; nothing is sent back for it, as in the series.
/// </summary>
public sealed class LockStepServerModel : ServerModel
{
    public override async Task ServeAsync(ServerConnection connection, CancellationToken cancellationToken)
    {
        await using var lookup = await connection.Source.OpenLookupAsync(cancellationToken).ConfigureAwait(false);
        while (await connection.ReadRequestAsync(cancellationToken).ConfigureAwait(false) is { } request)
        {
            using var reply = await connection.AnswerAsync(lookup, request, cancellationToken).ConfigureAwait(false);
            await connection.WriteAsync(reply, cancellationToken).ConfigureAwait(false);
        }
    }
}

/// <summary>
/// The series' TcpTestServer2/3/4: receive, answer and send run as separate loops joined by bounded
/// channels, so reading the network never waits for the database. With one answerer, responses
/// leave in request order (TCP 2 and 4); with several, each with its own database connection, they
/// leave as they are ready and the batch id in the tagged header tells the client which is which (TCP 3).
/// The end marker is echoed after every response.
/// </summary>
public sealed class PipelinedServerModel(int answerers, int maxPendingRequests) : ServerModel
{
    public override async Task ServeAsync(ServerConnection connection, CancellationToken cancellationToken)
    {
        if (answerers > 1 && !connection.Frames.Format.CarriesBatchId)
            throw new InvalidOperationException("Out-of-order answers need the tagged frame format.");
        using var cancellation = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        var token = cancellation.Token;
        var requests = Channel.CreateBounded<BatchRequest>(new BoundedChannelOptions(maxPendingRequests) { SingleWriter = true });
        var responses = Channel.CreateBounded<Reply>(new BoundedChannelOptions(Math.Max(2, answerers)) { SingleReader = true });
        try
        {
            async Task ReceiveAsync()
            {
                while (await connection.ReadRequestAsync(token).ConfigureAwait(false) is { } request)
                    await requests.Writer.WriteAsync(request, token).ConfigureAwait(false);
                requests.Writer.Complete();
            }

            async Task AnswerAsync()
            {
                await using var lookup = await connection.Source.OpenLookupAsync(token).ConfigureAwait(false);
                await foreach (var request in requests.Reader.ReadAllAsync(token).ConfigureAwait(false))
                {
                    var reply = await connection.AnswerAsync(lookup, request, token).ConfigureAwait(false);
                    try
                    {
                        await responses.Writer.WriteAsync(reply, token).ConfigureAwait(false);
                    }
                    catch
                    {
                        reply.Dispose();
                        throw;
                    }
                }
            }

            async Task AnswerAllAsync()
            {
                // One answerer failing must stop the others, or they would wait for requests forever.
                await TaskGroup.WhenAllOrFirstFailure(cancellation, [.. Enumerable.Range(0, answerers).Select(_ => AnswerAsync())])
                    .ConfigureAwait(false);
                responses.Writer.Complete();
            }

            async Task SendAsync()
            {
                await foreach (var response in responses.Reader.ReadAllAsync(token).ConfigureAwait(false))
                {
                    using (response)
                        await connection.WriteAsync(response, token).ConfigureAwait(false);
                }
                await connection.WriteEndAsync(token).ConfigureAwait(false);
            }

            await TaskGroup.WhenAllOrFirstFailure(cancellation, ReceiveAsync(), AnswerAllAsync(), SendAsync()).ConfigureAwait(false);
        }
        finally
        {
            while (responses.Reader.TryRead(out var response))
                response.Dispose();
        }
    }
}
