using System.Threading.Channels;
using IntegrationTasks.Common;
using IntegrationTasks.Data;
using IntegrationTasks.Transfer;
using IntegrationTasks.Wire;

namespace IntegrationTasks.Tcp;

/// <summary>One accepted connection, with what every threading model needs to answer its requests.</summary>
public sealed class ServerConnection(FrameConnection frames, RecordSource source, TimeSpan timeout, int maxBatchRecords = int.MaxValue)
{
    /// <summary>A response is written in slices this big, each within the timeout: a reader that still reads is never cut.</summary>
    private const int WriteSlice = 64 * 1024;

    private int _answered;

    /// <summary>The deadline of the read under way: every slice written moves it on, so a client busy reading a long reply is not idle.</summary>
    private CancellationTokenSource? _readDeadline;

    public FrameConnection Frames { get; } = frames;
    public RecordSource Source { get; } = source;
    public int Answered => Volatile.Read(ref _answered);

    /// <summary>
    /// The next request, or null for the end marker. A client that sends no complete request within the timeout —
    /// idle, or a header or body cut short with the connection left open — is dropped (IT3007), so it cannot hold
    /// a connection and its database work forever.
    /// </summary>
    public async ValueTask<Frame?> ReadRequestAsync(CancellationToken cancellationToken)
    {
        using var deadline = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        deadline.CancelAfter(timeout);
        Volatile.Write(ref _readDeadline, deadline);
        try
        {
            return await Frames.ReadAsync(deadline.Token).ConfigureAwait(false);
        }
        catch (OperationCanceledException) when (!cancellationToken.IsCancellationRequested)
        {
            throw new IntegrationException(ErrorCodes.ConnectionStalled,
                $"No complete request within {timeout.TotalSeconds:0.#} s after {Answered} answered (idle, or stalled mid-frame); see ConnectionTimeoutSeconds.");
        }
        finally
        {
            Interlocked.CompareExchange(ref _readDeadline, null, deadline);
        }
    }

    /// <summary>Traffic the other way: the read under way gets the whole timeout again.</summary>
    private void WriteProgressed()
    {
        try
        {
            Volatile.Read(ref _readDeadline)?.CancelAfter(timeout);
        }
        catch (ObjectDisposedException)
        {
            // that read has just ended
        }
    }

    /// <summary>
    /// Writes a frame to the client. A client that reads nothing for the timeout — it sends requests and never reads the replies —
    /// is dropped (IT3007): the read guard alone let it hold the connection, its buffers and its workers as long as it liked.
    /// </summary>
    public async ValueTask WriteAsync(ReadOnlyMemory<byte> frame, CancellationToken cancellationToken)
    {
        // One deadline for the frame, moved on before each slice (not a new one per slice: this is every reply's path).
        using var deadline = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        var offset = 0;
        do
        {
            var slice = frame.Slice(offset, Math.Min(WriteSlice, frame.Length - offset));
            offset += slice.Length;
            deadline.CancelAfter(timeout);
            try
            {
                await Frames.WriteAsync(slice, deadline.Token).ConfigureAwait(false);
                WriteProgressed();
            }
            catch (OperationCanceledException) when (!cancellationToken.IsCancellationRequested)
            {
                throw new IntegrationException(ErrorCodes.ConnectionStalled,
                    $"The client read nothing for {timeout.TotalSeconds:0.#} s after {Answered} answered (it stopped reading its replies); see ConnectionTimeoutSeconds.");
            }
        }
        while (offset < frame.Length);
    }

    public ValueTask WriteEndAsync(CancellationToken cancellationToken) => WriteAsync(Frames.Format.EndMarker(), cancellationToken);

    /// <summary>A request frame in, its response frame out (tagged with the request's batch id).</summary>
    public async Task<PooledBufferStream> AnswerAsync(RecordLookup lookup, Frame request, CancellationToken cancellationToken)
    {
        var response = new PooledBufferStream();
        try
        {
            FrameCodec.BeginFrame(response, Frames.Format);
            using (var body = request.OpenRead())
                await RecordService.AnswerAsync(lookup, body, response, cancellationToken, maxBatchRecords).ConfigureAwait(false);
            // The client accepts frames up to the same limit: a larger one is refused here, never sent.
            if (response.Length - Frames.Format.HeaderSize > Frames.MaxFrameBytes)
                throw new IntegrationException(ErrorCodes.FrameTooLarge,
                    $"The response to batch {request.BatchId} would be {response.Length:N0} bytes, over MaxFrameBytes ({Frames.MaxFrameBytes:N0}); not sent.");
            FrameCodec.EndFrame(response, Frames.Format, request.BatchId);
            Interlocked.Increment(ref _answered);
            return response;
        }
        catch
        {
            response.Dispose();
            throw;
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
            using (request)
            using (var response = await connection.AnswerAsync(lookup, request, cancellationToken).ConfigureAwait(false))
                await connection.WriteAsync(response.WrittenMemory, cancellationToken).ConfigureAwait(false);
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
        var requests = Channel.CreateBounded<Frame>(new BoundedChannelOptions(maxPendingRequests) { SingleWriter = true });
        var responses = Channel.CreateBounded<PooledBufferStream>(new BoundedChannelOptions(Math.Max(2, answerers)) { SingleReader = true });
        try
        {
            async Task ReceiveAsync()
            {
                while (await connection.ReadRequestAsync(token).ConfigureAwait(false) is { } frame)
                    await requests.Writer.WriteAsync(frame, token).ConfigureAwait(false);
                requests.Writer.Complete();
            }

            async Task AnswerAsync()
            {
                await using var lookup = await connection.Source.OpenLookupAsync(token).ConfigureAwait(false);
                await foreach (var frame in requests.Reader.ReadAllAsync(token).ConfigureAwait(false))
                {
                    using (frame)
                        await responses.Writer.WriteAsync(await connection.AnswerAsync(lookup, frame, token).ConfigureAwait(false), token)
                            .ConfigureAwait(false);
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
                        await connection.WriteAsync(response.WrittenMemory, token).ConfigureAwait(false);
                }
                await connection.WriteEndAsync(token).ConfigureAwait(false);
            }

            await TaskGroup.WhenAllOrFirstFailure(cancellation, ReceiveAsync(), AnswerAllAsync(), SendAsync()).ConfigureAwait(false);
        }
        finally
        {
            while (requests.Reader.TryRead(out var frame))
                frame.Dispose();
            while (responses.Reader.TryRead(out var response))
                response.Dispose();
        }
    }
}
