using Amqp;
using IntegrationTasks.Transfer;

namespace IntegrationTasks.Queues.Amqp10;

/// <summary>
/// The AMQP 1.0 client: one request a batch to the servers' queue, the answers from its own reply queue. The reply link's credit is
/// what keeps <see cref="MaxInFlight"/> batches in flight: the broker sends no more answers than the client has room for, and the
/// client sends no request before an earlier one is answered. An answer is accepted only once its import committed (unsettled), so
/// one the client dies holding is delivered again, and imported once. Answers to an earlier run on the same queue are accepted and
/// left: each run asks again for everything not whole in ClientTable.
/// </summary>
internal sealed class Amqp10Requester(BrokerOptions broker, Amqp10Topology topology, int client, string machine, string runId)
{
    public int MaxInFlight { get; init; } = SettingDefaults.MaxInFlight;
    public int MaxMessageBytes { get; init; } = SettingDefaults.MaxFrameBytes;

    /// <summary>
    /// Settled: how long the client waits for the next answer while requests are in flight before it calls them lost (their server
    /// died holding them; the broker keeps nothing). Unsettled, the broker delivers them again and the client waits; after each such
    /// silence it also sends the unanswered requests again (at least once: a second answer is acknowledged and left), so that an
    /// answer lost on its way — never seen by this link — does not hold the run until its timeout.
    /// </summary>
    public TimeSpan ReplyTimeout { get; init; } = TimeSpan.FromSeconds(30);

    public async Task<TransferResult> RunAsync(BatchPlan plan, BatchImporter importer, IReadOnlyList<int> pending, CommittedBatches committed,
        Action connected, CancellationToken cancellationToken)
    {
        if (pending.Count == 0)
            return new TransferResult(0, 0);
        var connection = await Amqp10Connections.ConnectAsync(broker, $"IntegrationTasks AMQP 1.0 client {client}", cancellationToken).ConfigureAwait(false);
        long sent = 0, received = 0;
        try
        {
            var lost = Amqp10Connections.Lost(connection, broker);
            using var cancellation = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
            // A receive cannot be cancelled: closing the connection ends it.
            using var closing = cancellation.Token.Register(() => _ = Amqp10Connections.CloseQuietlyAsync(connection));
            var token = cancellation.Token;
            var replyAddress = topology.ReplyAddress(client, machine);
            using var outstanding = new OutstandingBatches(pending, MaxInFlight, runId, client, plan.TotalBatches, replyAddress);
            try
            {
                await RunUntilBrokenAsync(lost, cancellation).ConfigureAwait(false);
            }
            catch (AmqpException e)
            {
                throw new IntegrationException(ErrorCodes.ConnectionLost, $"RabbitMQ's AMQP 1.0 link on {replyAddress} failed: {e.Error?.Condition} {e.Message}", e);
            }
            return new TransferResult(sent, received);

            Task RunUntilBrokenAsync(Task lost, CancellationTokenSource cancellation) => TaskGroup.RunUntilBrokenAsync(lost, cancellation, async () =>
            {
                var session = new Session(connection);
                var requests = topology.Sender(session, $"requests-{runId}-{client}", topology.RequestAddress);
                var replies = topology.Receiver(session, $"replies-{runId}-{client}", replyAddress, MaxInFlight * 2);
                connected();
                importer.MarkSetupDone();
                await TaskGroup.WhenAllOrFirstFailure(cancellation, SendAsync(requests), ReceiveAsync(replies, requests)).ConfigureAwait(false);
            });

            Task SendAsync(SenderLink requests) => outstanding.SendEachAsync(plan, committed, (batch, request) => SendOneAsync(requests, batch, request), token);

            async Task SendOneAsync(SenderLink requests, int batch, ReadOnlyMemory<byte> request)
            {
                var message = topology.Message(request, outstanding.RequestId(batch), null, replyAddress,
                    batch.ToString(System.Globalization.CultureInfo.InvariantCulture));
                // Unsettled: returns once the broker has taken (and, for a durable message, stored) the request. Ended by the
                // close a cancellation makes, or by the library's own timeout; off its frame-reading thread after.
                await requests.SendAsync(message).ConfigureAwait(ConfigureAwaitOptions.ForceYielding);
                token.ThrowIfCancellationRequested();
                Interlocked.Add(ref sent, request.Length);
            }

            async Task ReceiveAsync(ReceiverLink replies, SenderLink requests)
            {
                while (true)
                {
                    // Off the library's frame-reading thread before the import, so that frames keep being read meanwhile.
                    var message = await replies.ReceiveAsync(ReplyTimeout).ConfigureAwait(ConfigureAwaitOptions.ForceYielding);
                    token.ThrowIfCancellationRequested();
                    if (message is null && replies.IsClosed)
                        throw new IntegrationException(ErrorCodes.ConnectionLost,
                            $"The reply link on {replyAddress} closed{(replies.Error is { } error ? $": {error.Condition} {error.Description}" : "")}.");
                    if (message is null && !outstanding.AnyInFlight)
                        continue;
                    if (message is null && topology.Unsettled)
                    {
                        foreach (var unanswered in outstanding.Unanswered())
                            await outstanding.SendAgainAsync(plan, unanswered, (b, request) => SendOneAsync(requests, b, request)).ConfigureAwait(false);
                        continue;
                    }
                    if (message is null)
                        throw new IntegrationException(ErrorCodes.ConnectionLost,
                            $"No answer on {replyAddress} for {ReplyTimeout.TotalSeconds:N0} s with requests in flight: they are lost (a server stopped holding them).");
                    if (outstanding.BatchOf(message.Properties?.CorrelationId ?? "") is not { } batch)
                    {
                        replies.Accept(message);
                        continue;
                    }
                    if (Amqp10Topology.Refusal(message) is { } refusal)
                        throw CodedError.Refusal(refusal, batch);
                    var body = Amqp10Topology.Body(message);
                    if (body.Length > MaxMessageBytes)
                        throw new IntegrationException(ErrorCodes.FrameTooLarge,
                            $"The response to batch {batch} is {body.Length:N0} bytes, over the maximum of {MaxMessageBytes:N0}.");
                    Interlocked.Add(ref received, body.Length);
                    if (await outstanding.TakeAsync(batch, body, importer, committed, () =>
                        {
                            replies.Accept(message);
                            return Task.CompletedTask;
                        }, token).ConfigureAwait(false))
                        return;
                }
            }
        }
        finally
        {
            await Amqp10Connections.CloseQuietlyAsync(connection).ConfigureAwait(false);
        }
    }
}
