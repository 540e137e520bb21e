using Amqp;
using Amqp.Framing;
using IntegrationTasks.Data;
using IntegrationTasks.Transfer;
using IntegrationTasks.Wire;

namespace IntegrationTasks.Queues.Amqp10;

/// <summary>
/// The AMQP 1.0 server: takes requests from the servers' queue (its link's credit, <see cref="Prefetch"/>, bounds how many it holds),
/// answers each with the source's lookups into the reply queue the request names, and — unsettled — accepts the request only once
/// the broker has taken the answer: a server killed mid-batch leaves its request to be delivered again. A broker that goes away
/// (restarted) is reconnected to, every second, for as long as the server runs. A request that cannot be answered is refused to its
/// client with a coded error and never delivered again.
/// </summary>
internal sealed class Amqp10Responder(RecordSource source, BrokerOptions broker, Amqp10Topology topology, IEventLog log)
{
    public int Prefetch { get; init; } = 8;
    public int MaxMessageBytes { get; init; } = SettingDefaults.MaxFrameBytes;

    private long _answered;
    public long Answered => Interlocked.Read(ref _answered);

    public async Task<Func<CancellationToken, Task>> StartAsync(CancellationToken cancellationToken)
    {
        var lookup = await source.OpenLookupAsync(cancellationToken).ConfigureAwait(false);
        try
        {
            // The first connection is made before the server says it is ready: a broker that cannot be reached is an error at once.
            var first = await Amqp10Connections.ConnectAsync(broker, "IntegrationTasks AMQP 1.0 server", cancellationToken).ConfigureAwait(false);
            var stopping = new CancellationTokenSource();
            var serving = ServeAsync(first, lookup, stopping.Token);
            return async stop =>
            {
                await stop.WhenCancelledAsync().ConfigureAwait(false);
                await stopping.CancelAsync().ConfigureAwait(false);
                try
                {
                    await serving.ConfigureAwait(false);
                }
                finally
                {
                    await lookup.DisposeAsync().ConfigureAwait(false);
                    stopping.Dispose();
                }
            };
        }
        catch
        {
            await lookup.DisposeAsync().ConfigureAwait(false);
            throw;
        }
    }

    private async Task ServeAsync(Connection? connection, RecordLookup lookup, CancellationToken stopping)
    {
        while (!stopping.IsCancellationRequested)
        {
            try
            {
                connection ??= await Amqp10Connections.ConnectAsync(broker, "IntegrationTasks AMQP 1.0 server", stopping).ConfigureAwait(false);
                await ServeConnectionAsync(connection, lookup, stopping).ConfigureAwait(false);
            }
            catch (Exception e) when (stopping.IsCancellationRequested && e is OperationCanceledException or IntegrationException or AmqpException or ObjectDisposedException or TimeoutException)
            {
                // Stopped: the close that ends the receive ends the session too.
            }
            catch (Exception e) when (e is IntegrationException or AmqpException or ObjectDisposedException or TimeoutException)
            {
                // A send the broker held back past its timeout (a memory alarm) ends the connection too: what was not accepted is delivered again.
                log.Warning(e is IntegrationException coded ? coded.Code : ErrorCodes.ConnectionLost, $"Serving {topology.RequestAddress} over AMQP 1.0: {e.Message}; connecting again.");
                try
                {
                    await Task.Delay(TimeSpan.FromSeconds(1), stopping).ConfigureAwait(false);
                }
                catch (OperationCanceledException)
                {
                }
            }
            finally
            {
                if (connection is not null)
                    await Amqp10Connections.CloseQuietlyAsync(connection).ConfigureAwait(false);
                connection = null;
            }
        }
    }

    /// <summary>One connection's serving: until it is lost (IT3006) or the server stops (a receive cannot be cancelled: the close ends it).</summary>
    private async Task ServeConnectionAsync(Connection connection, RecordLookup lookup, CancellationToken stopping)
    {
        var lost = Amqp10Connections.Lost(connection, broker);
        using var cancellation = CancellationTokenSource.CreateLinkedTokenSource(stopping);
        using var closing = cancellation.Token.Register(() => _ = Amqp10Connections.CloseQuietlyAsync(connection));
        var session = new Session(connection);
        var requests = topology.Receiver(session, $"server-{Environment.ProcessId}", topology.RequestAddress, Prefetch);
        var replies = new Dictionary<string, SenderLink>(StringComparer.Ordinal);
        await TaskGroup.RunUntilBrokenAsync(lost, cancellation, async () =>
        {
            while (true)
            {
                // No timeout: an idle server waits (the close that stops it ends the wait). Off the library's frame-reading thread
                // before any work, so that frames keep being read while a batch is looked up.
                var message = await requests.ReceiveAsync(Timeout.InfiniteTimeSpan).ConfigureAwait(ConfigureAwaitOptions.ForceYielding);
                cancellation.Token.ThrowIfCancellationRequested();
                if (message is null)
                    throw new IntegrationException(ErrorCodes.ConnectionLost, $"The request link on {topology.RequestAddress} closed{(requests.Error is { } error ? $": {error.Condition} {error.Description}" : "")}.");
                await AnswerAsync(session, requests, replies, message, lookup, cancellation.Token).ConfigureAwait(false);
            }
        }).ConfigureAwait(false);
    }

    private async Task AnswerAsync(Session session, ReceiverLink requests, Dictionary<string, SenderLink> replies, Message message, RecordLookup lookup,
        CancellationToken stopping)
    {
        var requestId = message.Properties?.MessageId;
        var replyTo = message.Properties?.ReplyTo;
        // At most once: the request is the broker's no more as soon as it is taken.
        if (!topology.Unsettled)
            requests.Accept(message);
        try
        {
            if (string.IsNullOrEmpty(requestId) || string.IsNullOrEmpty(replyTo) || !replyTo.StartsWith("/queue/" + topology.ReplyQueuePrefix + ".", StringComparison.Ordinal))
                throw new IntegrationException(ErrorCodes.MalformedMessage, "The request names no request id, or no reply queue of this transport's.");
            var body = Amqp10Topology.Body(message);
            if (body.Length > MaxMessageBytes)
                throw new IntegrationException(ErrorCodes.FrameTooLarge, $"The request is {body.Length:N0} bytes, over the maximum of {MaxMessageBytes:N0}.");
            using var response = new PooledBufferStream();
            using (var request = MemoryStreams.ReadOnly(body))
                await RecordService.AnswerAsync(lookup, request, response, stopping).ConfigureAwait(false);
            try
            {
                // Ended by the close that stops the server, or by the library's own timeout.
                await ReplyTo(session, replies, replyTo).SendAsync(topology.Message(response.WrittenMemory, null, requestId, null, message.Properties?.Subject))
                    .ConfigureAwait(ConfigureAwaitOptions.ForceYielding);
            }
            catch (AmqpException)
            {
                // A reply link the broker closed is not used again: the next answer to that queue attaches a new one.
                replies.Remove(replyTo);
                throw;
            }
            if (topology.Unsettled)
                requests.Accept(message);
            Interlocked.Increment(ref _answered);
        }
        catch (IntegrationException e) when (e.Code != ErrorCodes.ConnectionLost)
        {
            log.Warning(e.Code, $"Refused request {requestId ?? "(no id)"}: {e.Message}");
            if (!string.IsNullOrEmpty(requestId) && !string.IsNullOrEmpty(replyTo) && replyTo.StartsWith("/queue/" + topology.ReplyQueuePrefix + ".", StringComparison.Ordinal))
            {
                var refusal = topology.Message(ReadOnlyMemory<byte>.Empty, null, requestId, null, message.Properties?.Subject);
                refusal.ApplicationProperties = new ApplicationProperties();
                refusal.ApplicationProperties[Amqp10Topology.ErrorProperty] = CodedError.Format(e);
                await ReplyTo(session, replies, replyTo).SendAsync(refusal).ConfigureAwait(ConfigureAwaitOptions.ForceYielding);
            }
            // Never delivered again: a request that cannot be answered once cannot be answered later.
            if (topology.Unsettled)
                requests.Reject(message, new Error(new Amqp.Types.Symbol("amqp:internal-error")) { Description = e.Message });
        }
    }

    /// <summary>One sender link a reply queue, kept for the connection's life.</summary>
    private SenderLink ReplyTo(Session session, Dictionary<string, SenderLink> replies, string address)
    {
        if (!replies.TryGetValue(address, out var link))
            replies[address] = link = topology.Sender(session, $"replies-{Environment.ProcessId}-{replies.Count}", address);
        return link;
    }
}
