using System.Globalization;
using IntegrationTasks.Transfer;
using NATS.Client.Core;
using NATS.Client.JetStream;

namespace IntegrationTasks.Queues.Nats;

/// <summary>
/// The JetStream client: publishes one request a batch into the requests' stream, at most <see cref="MaxInFlight"/> unanswered, each
/// stored once (its message id: this run, this client and the batch, so publishing it again after a break stores nothing new); takes
/// the answers from its own subject of the replies' stream through a durable consumer and acknowledges each only after its import
/// committed. Answers to another run (one killed before this one started) are acknowledged and left: this run asked again for
/// everything not whole in ClientTable. An answer delivered twice is imported once; the import also skips rows already there.
/// </summary>
public sealed class JetStreamClient(string url, int client, string runId)
{
    public int MaxInFlight { get; init; } = SettingDefaults.MaxInFlight;
    public int MaxMessageBytes { get; init; } = NatsDefaults.NatsMaxPayloadBytes;
    public BrokerCredentials? Credentials { get; init; }

    /// <summary>Over TLS: the authority the server's certificate must chain to; null: plaintext.</summary>
    public BrokerClientTls? ClientTls { get; init; }

    public async Task<TransferResult> RunAsync(BatchPlan plan, BatchImporter importer, IReadOnlyList<int> pending, CommittedBatches committed,
        Action connected, CancellationToken cancellationToken)
    {
        if (pending.Count == 0)
            return new TransferResult(0, 0);
        await using var connection = new NatsConnection(NatsConnections.ClientOptions(url, "IntegrationTasks JetStream client", Credentials, ClientTls));
        await NatsConnections.ConnectAsync(connection, url, Credentials, cancellationToken, ClientTls).ConfigureAwait(false);
        var js = new NatsJSContext(connection);
        using var cancellation = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        var token = cancellation.Token;
        long sent = 0, received = 0;
        var replySubject = JetStreamTopology.ReplySubject(runId, client);
        using var outstanding = new OutstandingBatches(pending, MaxInFlight, runId, client, plan.TotalBatches, replySubject);

        await NatsConnections.RunUntilLostAsync(connection, url, cancellation, async () =>
        {
            await JetStreamTopology.EnsureStreamsAsync(js, token).ConfigureAwait(false);
            var replies = await JetStreamTopology.ClientConsumerAsync(js, runId, client, MaxInFlight * 2, token).ConfigureAwait(false);
            connected();
            importer.MarkSetupDone();
            await TaskGroup.WhenAllOrFirstFailure(cancellation, PublishAsync(), ConsumeAsync(replies)).ConfigureAwait(false);
            // Every reply is taken: the run's own consumer goes with it (each run has one, so they must not pile up in the broker).
            await js.DeleteConsumerAsync(JetStreamTopology.ReplyStream, JetStreamTopology.ClientConsumer(runId, client), token).ConfigureAwait(false);
        }).ConfigureAwait(false);
        return new TransferResult(sent, received);

        Task PublishAsync() => outstanding.SendEachAsync(plan, committed, async (batch, request) =>
            {
                var batchText = batch.ToString(CultureInfo.InvariantCulture);
                var requestId = outstanding.RequestId(batch);
                var ack = await js.PublishAsync<ReadOnlyMemory<byte>>(JetStreamTopology.RequestSubject, request,
                    headers: new NatsHeaders
                    {
                        [JetStreamTopology.BatchHeader] = batchText, [JetStreamTopology.RequestIdHeader] = requestId,
                        [JetStreamTopology.ReplySubjectHeader] = replySubject,
                    },
                    opts: new NatsJSPubOpts { MsgId = requestId }, cancellationToken: token).ConfigureAwait(false);
                // A duplicate is a request this run stored before a break: it is in the stream, which is what the publish is for.
                if (ack.Error is { } error)
                    throw new IntegrationException(ErrorCodes.TransferFailed, $"JetStream did not store the request for batch {batch}: {error.Description} ({error.Code}).");
                Interlocked.Add(ref sent, request.Length);
            }, token);

        async Task ConsumeAsync(INatsJSConsumer replies)
        {
            await foreach (var message in replies.ConsumeAsync<NatsMemoryOwner<byte>>(opts: new NatsJSConsumeOpts { MaxMsgs = MaxInFlight * 2 }, cancellationToken: token)
                               .ConfigureAwait(false))
            {
                using var body = message.Data;
                if (outstanding.BatchOf(message.Headers?[JetStreamTopology.RequestIdHeader].ToString() ?? "") is not { } batch)
                {
                    await message.AckAsync(cancellationToken: token).ConfigureAwait(false);
                    continue;
                }
                NatsConnections.ThrowIfRefused(message.Headers, batch);
                if (body.Length > MaxMessageBytes)
                    throw new IntegrationException(ErrorCodes.FrameTooLarge,
                        $"The response to batch {batch} is {body.Length:N0} bytes, over the maximum of {MaxMessageBytes:N0}.");
                Interlocked.Add(ref received, body.Length);
                if (await outstanding.TakeAsync(batch, body.Memory, importer, committed, () => message.AckAsync(cancellationToken: token).AsTask(), token)
                        .ConfigureAwait(false))
                    return;
            }
        }
    }
}
