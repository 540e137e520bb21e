using System.Diagnostics;
using IntegrationTasks.Transfer;
using IntegrationTasks.Wire;
using NATS.Client.Core;

namespace IntegrationTasks.Queues.Nats;

/// <summary>
/// NATS core request-reply, the counterpart of RabbitMQClientTest: one request per batch on the servers' subject, answered to this
/// client's inbox, <see cref="MaxInFlight"/> at once. At most once: the server keeps nothing, so a request whose answer is lost
/// (a broken connection, a server stopped mid-batch) times out and is reported as a lost connection; the task's resumption asks
/// again for what is not committed.
/// </summary>
public sealed class NatsCoreClient(string url, string subject)
{
    public int MaxInFlight { get; init; } = SettingDefaults.MaxInFlight;
    public int MaxMessageBytes { get; init; } = NatsDefaults.NatsMaxPayloadBytes;
    public BrokerCredentials? Credentials { get; init; }

    /// <summary>Over TLS: the authority the server's certificate must chain to; null: plaintext.</summary>
    public BrokerClientTls? ClientTls { get; init; }

    /// <summary>
    /// How long one request waits for its answer: a request in the hands of a server that was killed is never answered, and this is
    /// what notices it (batches are answered in milliseconds; 16 clients of 1 MiB rows wait seconds in the server's queue).
    /// </summary>
    public TimeSpan ReplyTimeout { get; init; } = TimeSpan.FromSeconds(15);

    public async Task<TransferResult> RunAsync(BatchPlan plan, BatchImporter importer, IReadOnlyList<int> pending, CommittedBatches committed,
        Action connected, CancellationToken cancellationToken)
    {
        if (pending.Count == 0)
            return new TransferResult(0, 0);
        await using var connection = new NatsConnection(NatsConnections.ClientOptions(url, "IntegrationTasks client", Credentials, ClientTls));
        await NatsConnections.ConnectAsync(connection, url, Credentials, cancellationToken, ClientTls).ConfigureAwait(false);
        connected();
        importer.MarkSetupDone();
        long sent = 0, received = 0;
        using var importing = new SemaphoreSlim(1, 1);
        var replyOptions = new NatsSubOpts { Timeout = ReplyTimeout };

        async Task AskAsync(int batch, CancellationToken token)
        {
            using var request = new PooledBufferStream();
            RecordXml.WriteRequest(request, plan.Ids(batch));
            await committed.Latency.SendTurnAsync(batch, token).ConfigureAwait(false);
            Interlocked.Add(ref sent, request.Length);
            var reply = await RequestAsync(batch, request.WrittenMemory, token).ConfigureAwait(false);
            NatsConnections.ThrowIfRefused(reply.Headers, batch);
            using var body = reply.Data;
            var length = body.Length;
            if (length > MaxMessageBytes)
                throw new IntegrationException(ErrorCodes.FrameTooLarge, $"The response to batch {batch} is {length:N0} bytes, over the maximum of {MaxMessageBytes:N0}.");
            Interlocked.Add(ref received, length);
            committed.Latency.Received(batch);
            await importing.WaitAsync(token).ConfigureAwait(false);
            try
            {
                using var stream = MemoryStreams.ReadOnly(body.Memory);
                await importer.ImportAsync(stream, token).ConfigureAwait(false);
                committed.Add(batch);
            }
            finally
            {
                importing.Release();
            }
        }

        // Nothing holds a request while no server subscribes (one being started again): NATS says so at once, and the request is
        // sent again, every 200 ms, for as long as an answer may take.
        async Task<NatsMsg<NatsMemoryOwner<byte>>> RequestAsync(int batch, ReadOnlyMemory<byte> request, CancellationToken token)
        {
            var giveUpAt = Stopwatch.GetTimestamp() + (long)(ReplyTimeout.TotalSeconds * Stopwatch.Frequency);
            while (true)
            {
                try
                {
                    return await connection.RequestAsync<ReadOnlyMemory<byte>, NatsMemoryOwner<byte>>(subject, request, replyOpts: replyOptions,
                        cancellationToken: token).ConfigureAwait(false);
                }
                catch (NatsNoReplyException e)
                {
                    throw new IntegrationException(ErrorCodes.ConnectionLost, $"No answer to batch {batch} within {ReplyTimeout.TotalSeconds:0} s: {e.Message}", e);
                }
                catch (NatsNoRespondersException) when (Stopwatch.GetTimestamp() < giveUpAt)
                {
                    await Task.Delay(TimeSpan.FromMilliseconds(200), token).ConfigureAwait(false);
                }
                catch (NatsNoRespondersException e)
                {
                    throw new IntegrationException(ErrorCodes.BrokerUnavailable,
                        $"No server answered on '{subject}' for {ReplyTimeout.TotalSeconds:0} s (none subscribes): {e.Message}", e);
                }
            }
        }

        using var cancellation = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        await NatsConnections.RunUntilLostAsync(connection, url, cancellation, () =>
            Parallel.ForEachAsync(pending, new ParallelOptions { MaxDegreeOfParallelism = MaxInFlight, CancellationToken = cancellation.Token },
                async (batch, token) => await AskAsync(batch, token).ConfigureAwait(false))).ConfigureAwait(false);
        return new TransferResult(sent, received);
    }
}
