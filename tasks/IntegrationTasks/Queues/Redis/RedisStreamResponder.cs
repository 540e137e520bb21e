using IntegrationTasks.Data;
using IntegrationTasks.Transfer;
using IntegrationTasks.Wire;
using StackExchange.Redis;

namespace IntegrationTasks.Queues.Redis;

/// <summary>
/// The Redis Streams server: reads requests from the requests' stream as a consumer of the servers' group (so several share them),
/// answers each, and appends the reply to the client's stream and acknowledges (and deletes) the request in one MULTI/EXEC — so a
/// server killed mid-batch leaves the request pending, never answered twice. Entries a dead server read and left are claimed once
/// they have waited <see cref="RedisStreamTopology.ClaimIdle"/>. A request that cannot be answered gets a reply carrying the coded
/// error. Its connections reconnect by themselves: a restarted Redis is served again.
/// </summary>
public sealed class RedisStreamResponder(RecordSource source, string endpoint, IEventLog log)
{
    public int Prefetch { get; init; } = 8;
    public int MaxMessageBytes { get; init; } = SettingDefaults.MaxFrameBytes;
    public BrokerCredentials? Credentials { get; init; }

    /// <summary>Over TLS: the authority the server's certificate must chain to; null: plaintext.</summary>
    public BrokerClientTls? ClientTls { get; init; }

    private long _answered;
    private long _refused;
    public long Answered => Interlocked.Read(ref _answered);
    public long Refused => Interlocked.Read(ref _refused);

    /// <summary>This server's name in the group: a server started again is another consumer, and claims what the dead one left.</summary>
    private readonly string _consumer = $"server-{Environment.ProcessId}-{Guid.NewGuid().ToString("N")[..8]}";

    public async Task<Func<CancellationToken, Task>> StartAsync(CancellationToken cancellationToken)
    {
        var commands = await RedisConnections.ConnectAsync(endpoint, "IntegrationTasks server", Credentials, ClientTls, cancellationToken).ConfigureAwait(false);
        ConnectionMultiplexer? reads = null;
        try
        {
            // Blocking reads on a connection of their own: StackExchange.Redis pipelines every command on a connection.
            reads = await RedisConnections.ConnectAsync(endpoint, "IntegrationTasks server reads", Credentials, ClientTls, cancellationToken).ConfigureAwait(false);
            var db = commands.GetDatabase();
            await RedisStreamTopology.EnsureGroupAsync(db, RedisStreamTopology.RequestStream, RedisStreamTopology.ServerGroup).ConfigureAwait(false);
            var lookup = await source.OpenLookupAsync(cancellationToken).ConfigureAwait(false);
            var stopping = new CancellationTokenSource();
            var serving = ServeAsync(db, reads.GetDatabase(), lookup, stopping.Token);
            var readsConnection = reads;
            return async stop =>
            {
                await stop.WhenCancelledAsync().ConfigureAwait(false);
                // Whatever is in hand is left pending: the next server claims it.
                await stopping.CancelAsync().ConfigureAwait(false);
                await serving.ConfigureAwait(false);
                await lookup.DisposeAsync().ConfigureAwait(false);
                await readsConnection.CloseAsync().ConfigureAwait(false);
                await commands.CloseAsync().ConfigureAwait(false);
                readsConnection.Dispose();
                commands.Dispose();
                stopping.Dispose();
            };
        }
        catch
        {
            reads?.Dispose();
            commands.Dispose();
            throw;
        }
    }

    private async Task ServeAsync(IDatabase db, IDatabase reads, RecordLookup lookup, CancellationToken stopping)
    {
        var nextClaim = DateTime.UtcNow;
        while (!stopping.IsCancellationRequested)
        {
            try
            {
                if (DateTime.UtcNow >= nextClaim)
                {
                    foreach (var entry in await RedisStreamTopology.ClaimAsync(db, RedisStreamTopology.RequestStream, RedisStreamTopology.ServerGroup, _consumer,
                                 RedisStreamTopology.ClaimIdle, Prefetch).ConfigureAwait(false))
                        await AnswerAsync(db, entry, lookup, stopping).ConfigureAwait(false);
                    nextClaim = DateTime.UtcNow + RedisStreamTopology.ClaimIdle / 2;
                }
                var entries = await RedisStreamTopology.ReadGroupBlockingAsync(reads, RedisStreamTopology.RequestStream, RedisStreamTopology.ServerGroup, _consumer,
                    Prefetch, RedisConnections.BlockFor).ConfigureAwait(false);
                foreach (var entry in entries)
                    await AnswerAsync(db, entry, lookup, stopping).ConfigureAwait(false);
            }
            catch (OperationCanceledException) when (stopping.IsCancellationRequested)
            {
            }
            catch (Exception e) when (RedisConnections.IsOutage(e))
            {
                // Redis went away or is loading its file again (a restart): what was in hand is pending; ask again shortly.
                log.Warning(ErrorCodes.BrokerUnavailable, $"Redis at {endpoint}: {e.Message}; trying again.");
                await PauseAsync(stopping).ConfigureAwait(false);
            }
            catch (Exception e) when (RedisConnections.IsFull(e))
            {
                // Redis at its memory limit: the entries in hand stay pending; the server goes on once it takes writes again.
                log.Warning(ErrorCodes.ServerBusy, RedisConnections.Full(endpoint, e).Message);
                await PauseAsync(stopping).ConfigureAwait(false);
            }
            catch (Exception e) when (e is not OperationCanceledException)
            {
                // Whatever it was, the entries in hand stay pending (claimed again later) and the server goes on for the others.
                log.Warning(ErrorCodes.Unexpected, $"Serving Redis at {endpoint}: {e.Message}");
                await PauseAsync(stopping).ConfigureAwait(false);
            }
        }
    }

    private static async Task PauseAsync(CancellationToken stopping)
    {
        try
        {
            await Task.Delay(TimeSpan.FromMilliseconds(500), stopping).ConfigureAwait(false);
        }
        catch (OperationCanceledException)
        {
        }
    }

    private async Task AnswerAsync(IDatabase db, StreamEntry entry, RecordLookup lookup, CancellationToken stopping)
    {
        var batch = RedisStreamTopology.Field(entry, RedisStreamTopology.BatchField);
        var requestId = RedisStreamTopology.Field(entry, RedisStreamTopology.RequestIdField);
        var replyTo = RedisStreamTopology.Field(entry, RedisStreamTopology.ReplyToField);
        try
        {
            if (batch.IsNullOrEmpty || requestId.IsNullOrEmpty || replyTo.IsNullOrEmpty)
                throw new IntegrationException(ErrorCodes.MalformedMessage, "The request names no batch, request id or reply stream.");
            var body = (ReadOnlyMemory<byte>)RedisStreamTopology.Field(entry, RedisStreamTopology.BodyField);
            if (body.Length > MaxMessageBytes)
                throw new IntegrationException(ErrorCodes.FrameTooLarge, $"The request is {body.Length:N0} bytes, over the maximum of {MaxMessageBytes:N0}.");
            using var response = new PooledBufferStream();
            using (var request = MemoryStreams.ReadOnly(body))
                await RecordService.AnswerAsync(lookup, request, response, stopping).ConfigureAwait(false);
            await ReplyAsync(db, entry, (string)replyTo!, [new(RedisStreamTopology.BatchField, batch), new(RedisStreamTopology.RequestIdField, requestId),
                new(RedisStreamTopology.BodyField, response.WrittenMemory)]).ConfigureAwait(false);
            Interlocked.Increment(ref _answered);
        }
        catch (IntegrationException e)
        {
            Interlocked.Increment(ref _refused);
            log.Warning(e.Code, $"Refused request {(requestId.IsNullOrEmpty ? "(no id)" : requestId.ToString())}: {e.Message}");
            if (replyTo.IsNullOrEmpty || requestId.IsNullOrEmpty)
            {
                // Nobody to tell: taken out of the stream so that it is not claimed again and again.
                await db.StreamAcknowledgeAsync(RedisStreamTopology.RequestStream, RedisStreamTopology.ServerGroup, entry.Id).ConfigureAwait(false);
                await db.StreamDeleteAsync(RedisStreamTopology.RequestStream, [entry.Id]).ConfigureAwait(false);
                return;
            }
            await ReplyAsync(db, entry, (string)replyTo!, [new(RedisStreamTopology.BatchField, batch), new(RedisStreamTopology.RequestIdField, requestId),
                new(RedisStreamTopology.ErrorField, $"{e.Code}: {e.Message}")]).ConfigureAwait(false);
        }
    }

    /// <summary>The reply appended and the request acknowledged and deleted, all or nothing.</summary>
    private static async Task ReplyAsync(IDatabase db, StreamEntry request, string replyTo, NameValueEntry[] reply)
    {
        var transaction = db.CreateTransaction();
        _ = transaction.StreamAddAsync(replyTo, reply);
        _ = transaction.StreamAcknowledgeAsync(RedisStreamTopology.RequestStream, RedisStreamTopology.ServerGroup, request.Id);
        _ = transaction.StreamDeleteAsync(RedisStreamTopology.RequestStream, [request.Id]);
        if (!await transaction.ExecuteAsync().ConfigureAwait(false))
            throw new InvalidOperationException($"The reply to {request.Id} was not written (its transaction did not run).");
    }
}
