using System.Threading.Channels;
using IntegrationTasks.Common;
using IntegrationTasks.Data;
using IntegrationTasks.Transfer;
using IntegrationTasks.Wire;

namespace IntegrationTasks.Tcp;

/// <summary>One accepted connection, with what every threading model needs to answer its requests.</summary>
public sealed class ServerConnection(FrameConnection frames, RecordSource source, TimeSpan timeout)
{
    private int _answered;

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
        try
        {
            return await Frames.ReadAsync(deadline.Token).ConfigureAwait(false);
        }
        catch (OperationCanceledException) when (!cancellationToken.IsCancellationRequested)
        {
            throw new IntegrationException(ErrorCodes.ConnectionStalled,
                $"No complete request within {timeout.TotalSeconds:0.#} s after {Answered} answered (idle, or stalled mid-frame); see ConnectionTimeoutSeconds.");
        }
    }

    /// <summary>A request frame in, its response frame out (tagged with the request's batch id).</summary>
    public async Task<PooledBufferStream> AnswerAsync(RecordLookup lookup, Frame request, CancellationToken cancellationToken)
    {
        var response = new PooledBufferStream();
        try
        {
            FrameCodec.BeginFrame(response, Frames.Format);
            using (var body = request.OpenRead())
                await RecordService.AnswerAsync(lookup, body, response, cancellationToken).ConfigureAwait(false);
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
                await connection.Frames.WriteAsync(response.WrittenMemory, cancellationToken).ConfigureAwait(false);
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
                        await connection.Frames.WriteAsync(response.WrittenMemory, token).ConfigureAwait(false);
                }
                await connection.Frames.WriteEndAsync(token).ConfigureAwait(false);
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
