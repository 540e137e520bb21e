using IntegrationTasks.Data;
using IntegrationTasks.Transfer;
using IntegrationTasks.Wire;
using NATS.Client.Core;
using NATS.Client.JetStream;

namespace IntegrationTasks.Queues.Nats;

/// <summary>
/// The JetStream server, the counterpart of RabbitMQDurable's: takes requests from the work-queue stream through a durable consumer,
/// answers each into the requesting client's reply subject (published with a message id, so an answer published twice is stored
/// once within the duplicate window), and acknowledges the request only once the reply is stored. A server killed mid-batch
/// leaves its request unacknowledged: JetStream delivers it again after AckWait, to this server started again or another.
/// </summary>
public sealed class JetStreamServer(RecordSource source, string url, IEventLog log) : NatsResponder(source, url, "IntegrationTasks JetStream server")
{
    public int Prefetch { get; init; } = 8;

    /// <summary>Whatever is in hand when the server stops is left unacknowledged: JetStream delivers it again.</summary>
    protected override async Task<(Task Serving, Func<Task> BeforeStop)> ServeAsync(NatsConnection connection, RecordLookup lookup,
        CancellationToken stopping, CancellationToken cancellationToken)
    {
        var js = new NatsJSContext(connection);
        await JetStreamTopology.EnsureStreamsAsync(js, cancellationToken).ConfigureAwait(false);
        var consumer = await JetStreamTopology.ServerConsumerAsync(js, Prefetch, cancellationToken).ConfigureAwait(false);
        return (ServeAsync(js, consumer, lookup, stopping), () => Task.CompletedTask);
    }

    /// <summary>Consumes until stopped; a consume that ends with an error (JetStream recovering after a restart) starts again.</summary>
    private async Task ServeAsync(NatsJSContext js, INatsJSConsumer consumer, RecordLookup lookup, CancellationToken stopping)
    {
        while (!stopping.IsCancellationRequested)
        {
            try
            {
                await foreach (var message in consumer.ConsumeAsync<NatsMemoryOwner<byte>>(opts: new NatsJSConsumeOpts { MaxMsgs = Prefetch },
                                   cancellationToken: stopping).ConfigureAwait(false))
                    await AnswerAsync(js, message, lookup, stopping).ConfigureAwait(false);
            }
            catch (OperationCanceledException) when (stopping.IsCancellationRequested)
            {
            }
            catch (Exception e) when (e is NatsException)
            {
                log.Warning(ErrorCodes.BrokerUnavailable, $"Consuming the requests' stream: {e.Message}; starting again.");
                try
                {
                    await Task.Delay(TimeSpan.FromMilliseconds(500), stopping).ConfigureAwait(false);
                    consumer = await JetStreamTopology.ServerConsumerAsync(js, Prefetch, stopping).ConfigureAwait(false);
                }
                catch (OperationCanceledException)
                {
                }
                catch (NatsException)
                {
                }
            }
        }
    }

    private async Task AnswerAsync(NatsJSContext js, INatsJSMsg<NatsMemoryOwner<byte>> message, RecordLookup lookup, CancellationToken stopping)
    {
        using var body = message.Data;
        var batch = message.Headers?[JetStreamTopology.BatchHeader].ToString();
        var requestId = message.Headers?[JetStreamTopology.RequestIdHeader].ToString();
        var replyTo = message.Headers?[JetStreamTopology.ReplySubjectHeader].ToString();
        try
        {
            if (string.IsNullOrEmpty(batch) || string.IsNullOrEmpty(requestId) || string.IsNullOrEmpty(replyTo))
                throw new IntegrationException(ErrorCodes.MalformedMessage, "The request names no batch, request id or reply subject.");
            if (body.Length > MaxMessageBytes)
                throw new IntegrationException(ErrorCodes.FrameTooLarge, $"The request is {body.Length:N0} bytes, over the maximum of {MaxMessageBytes:N0}.");
            using var response = new PooledBufferStream();
            using (var request = MemoryStreams.ReadOnly(body.Memory))
                await RecordService.AnswerAsync(lookup, request, response, stopping).ConfigureAwait(false);
            await PublishReplyAsync(js, replyTo, ReplyHeaders(batch, requestId), response.WrittenMemory, requestId, stopping).ConfigureAwait(false);
            await message.AckAsync(cancellationToken: stopping).ConfigureAwait(false);
            CountAnswered();
        }
        catch (IntegrationException e)
        {
            await RefuseAsync(js, message, e, batch, requestId, replyTo, stopping).ConfigureAwait(false);
        }
        catch (NatsPayloadTooLargeException e)
        {
            // The server's max_payload is below this reply (a server of one's own at its 1 MB default): refused, not delivered again forever.
            await RefuseAsync(js, message, new IntegrationException(ErrorCodes.FrameTooLarge, $"The reply is over nats-server's max_payload: {e.Message}"),
                batch, requestId, replyTo, stopping).ConfigureAwait(false);
        }
        catch (NatsException e)
        {
            // The broker went away mid-answer (a restart): not acknowledged, so JetStream delivers the request again.
            log.Warning(ErrorCodes.TransferFailed, $"Request {requestId ?? "(no id)"} left to be delivered again: {e.Message}");
        }
        catch (Exception e) when (e is not OperationCanceledException)
        {
            await RefuseAsync(js, message, new IntegrationException(ErrorCodes.Unexpected, e.Message), batch, requestId, replyTo, stopping).ConfigureAwait(false);
        }
    }

    /// <summary>
    /// Never delivered again (a request that cannot be answered once cannot be answered later); its client is told, with the code,
    /// when the request says where it waits.
    /// </summary>
    private async Task RefuseAsync(NatsJSContext js, INatsJSMsg<NatsMemoryOwner<byte>> message, IntegrationException e, string? batch, string? requestId,
        string? replyTo, CancellationToken stopping)
    {
        CountRefused();
        log.Warning(e.Code, $"Refused request {requestId ?? "(no id)"}: {e.Message}");
        try
        {
            if (!string.IsNullOrEmpty(replyTo) && !string.IsNullOrEmpty(requestId))
            {
                var headers = NatsConnections.Refusal(e);
                headers[JetStreamTopology.BatchHeader] = batch ?? "";
                headers[JetStreamTopology.RequestIdHeader] = requestId;
                await PublishReplyAsync(js, replyTo, headers, ReadOnlyMemory<byte>.Empty, requestId, stopping).ConfigureAwait(false);
            }
            await message.AckTerminateAsync(cancellationToken: stopping).ConfigureAwait(false);
        }
        catch (Exception refusing) when (refusing is NatsException or IntegrationException)
        {
            log.Warning(ErrorCodes.TransferFailed, $"Request {requestId ?? "(no id)"}: its refusal could not be sent ({refusing.Message}).");
        }
    }

    private static NatsHeaders ReplyHeaders(string batch, string requestId) =>
        new() { [JetStreamTopology.BatchHeader] = batch, [JetStreamTopology.RequestIdHeader] = requestId };

    /// <summary>Stored once whatever happens: a server killed after this and before its acknowledgement answers again, with the same id.</summary>
    private static async Task PublishReplyAsync(NatsJSContext js, string replyTo, NatsHeaders headers, ReadOnlyMemory<byte> body, string requestId,
        CancellationToken stopping)
    {
        var ack = await js.PublishAsync(replyTo, body, headers: headers, opts: new NatsJSPubOpts { MsgId = requestId }, cancellationToken: stopping)
            .ConfigureAwait(false);
        if (ack.Error is { } error)
            throw new IntegrationException(ErrorCodes.TransferFailed, $"JetStream did not store the reply to {requestId} on '{replyTo}': {error.Description} ({error.Code}).");
    }
}
