using System.Globalization;
using IntegrationTasks.Transfer;
using StackExchange.Redis;

namespace IntegrationTasks.Queues.Redis;

/// <summary>
/// The Redis Streams client: appends one request a batch to the requests' stream, at most <see cref="MaxInFlight"/> unanswered; reads
/// the answers from its own stream as the consumer named by this run, and acknowledges (and deletes) each only after its import
/// committed. After a break it first reads what was delivered to it and not acknowledged, then new entries. Answers to another run
/// (one killed before this one started) are taken over, acknowledged and left: this run asked again for everything not whole in
/// ClientTable. An answer that comes twice is imported once; the import also skips rows already there.
/// </summary>
public sealed class RedisStreamClient(string endpoint, int client, string runId)
{
    public int MaxInFlight { get; init; } = SettingDefaults.MaxInFlight;
    public int MaxMessageBytes { get; init; } = SettingDefaults.MaxFrameBytes;
    public BrokerCredentials? Credentials { get; init; }

    /// <summary>Over TLS: the authority the server's certificate must chain to; null: plaintext.</summary>
    public BrokerClientTls? ClientTls { get; init; }

    public async Task<TransferResult> RunAsync(BatchPlan plan, BatchImporter importer, IReadOnlyList<int> pending, CommittedBatches committed,
        Action connected, CancellationToken cancellationToken)
    {
        if (pending.Count == 0)
            return new TransferResult(0, 0);
        using var commands = await RedisConnections.ConnectAsync(endpoint, "IntegrationTasks client", Credentials, ClientTls, cancellationToken).ConfigureAwait(false);
        using var reads = await RedisConnections.ConnectAsync(endpoint, "IntegrationTasks client reads", Credentials, ClientTls, cancellationToken).ConfigureAwait(false);
        var db = commands.GetDatabase();
        var readDb = reads.GetDatabase();
        using var cancellation = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        var token = cancellation.Token;
        long sent = 0, received = 0;
        var replyStream = RedisStreamTopology.ReplyStream(runId, client);
        using var outstanding = new OutstandingBatches(pending, MaxInFlight, runId, client, plan.TotalBatches, replyStream);

        await RedisConnections.RunUntilLostAsync([commands, reads], endpoint, cancellation, async () =>
        {
            await RedisStreamTopology.EnsureGroupAsync(db, RedisStreamTopology.RequestStream, RedisStreamTopology.ServerGroup).ConfigureAwait(false);
            await RedisStreamTopology.EnsureGroupAsync(db, replyStream, RedisStreamTopology.ClientGroup).ConfigureAwait(false);
            connected();
            importer.MarkSetupDone();
            await TaskGroup.WhenAllOrFirstFailure(cancellation, PublishAsync(), ConsumeAsync()).ConfigureAwait(false);
            // Every reply is taken: the run's own stream goes with it (each run has one, so they must not pile up in the broker).
            await db.KeyDeleteAsync(replyStream).ConfigureAwait(false);
        }).ConfigureAwait(false);
        return new TransferResult(sent, received);

        Task PublishAsync() => outstanding.SendEachAsync(plan, committed, async (batch, request) =>
            {
                var batchText = batch.ToString(CultureInfo.InvariantCulture);
                await db.StreamAddAsync(RedisStreamTopology.RequestStream,
                [
                    new(RedisStreamTopology.BatchField, batchText), new(RedisStreamTopology.RequestIdField, outstanding.RequestId(batch)),
                    new(RedisStreamTopology.ReplyToField, replyStream), new(RedisStreamTopology.BodyField, request),
                ]).WaitAsync(token).ConfigureAwait(false);
                Interlocked.Add(ref sent, request.Length);
            }, token);

        async Task ConsumeAsync()
        {
            // Whatever was delivered and not acknowledged — to an earlier attempt of this run, or to an earlier run — taken over first
            // (a claim of every pending entry, this consumer's own included); then new entries.
            var consumer = runId;
            var left = await RedisStreamTopology.ClaimAsync(db, replyStream, RedisStreamTopology.ClientGroup, consumer, TimeSpan.Zero, int.MaxValue)
                .WaitAsync(token).ConfigureAwait(false);
            foreach (var entry in left)
                if (await HandleAsync(entry).ConfigureAwait(false))
                    return;
            while (true)
            {
                token.ThrowIfCancellationRequested();
                var entries = await RedisStreamTopology.ReadGroupBlockingAsync(readDb, replyStream, RedisStreamTopology.ClientGroup, consumer,
                    MaxInFlight * 2, RedisConnections.BlockFor).WaitAsync(token).ConfigureAwait(false);
                foreach (var entry in entries)
                    if (await HandleAsync(entry).ConfigureAwait(false))
                        return;
            }
        }

        // True once every batch is in.
        async Task<bool> HandleAsync(StreamEntry entry)
        {
            if (outstanding.BatchOf((string?)RedisStreamTopology.Field(entry, RedisStreamTopology.RequestIdField) ?? "") is not { } batch)
            {
                await AcknowledgeAsync(entry).ConfigureAwait(false);
                return false;
            }
            var refusal = RedisStreamTopology.Field(entry, RedisStreamTopology.ErrorField);
            if (!refusal.IsNullOrEmpty)
                throw CodedError.TryParse(refusal.ToString(), out var code, out var message)
                    ? new IntegrationException(code, $"The server refused batch {batch}: {message}")
                    : new IntegrationException(ErrorCodes.TransferFailed, $"The server refused batch {batch}: {refusal}");
            var body = (ReadOnlyMemory<byte>)RedisStreamTopology.Field(entry, RedisStreamTopology.BodyField);
            if (body.Length > MaxMessageBytes)
                throw new IntegrationException(ErrorCodes.FrameTooLarge, $"The response to batch {batch} is {body.Length:N0} bytes, over the maximum of {MaxMessageBytes:N0}.");
            Interlocked.Add(ref received, body.Length);
            return await outstanding.TakeAsync(batch, body, importer, committed, () => AcknowledgeAsync(entry), token).ConfigureAwait(false);
        }

        async Task AcknowledgeAsync(StreamEntry entry)
        {
            var transaction = db.CreateTransaction();
            _ = transaction.StreamAcknowledgeAsync(replyStream, RedisStreamTopology.ClientGroup, entry.Id);
            _ = transaction.StreamDeleteAsync(replyStream, [entry.Id]);
            await transaction.ExecuteAsync().WaitAsync(token).ConfigureAwait(false);
        }
    }
}
