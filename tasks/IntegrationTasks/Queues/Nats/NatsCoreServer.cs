using IntegrationTasks.Data;
using IntegrationTasks.Transfer;
using IntegrationTasks.Wire;
using NATS.Client.Core;

namespace IntegrationTasks.Queues.Nats;

/// <summary>
/// The NATS core server: subscribes to the requests' subject in a queue group (so several servers share the requests) and answers
/// each with the source's lookups, to the request's inbox. Nothing is kept: a request that arrives while no server listens is
/// refused to its client at once ("no responders"), one in hand when the server stops is not answered and times out there.
/// A request that cannot be answered gets an empty reply with a coded error header, so the client fails fast instead of waiting.
/// </summary>
public sealed class NatsCoreServer(RecordSource source, string url, string subject, IEventLog log)
    : NatsResponder(source, url, "IntegrationTasks server")
{
    /// <summary>The subject the clients send their requests to.</summary>
    public const string Subject = "integrationtasks.requests";
    public const string QueueGroup = "integrationtasks-servers";

    protected override async Task<(Task Serving, Func<Task> BeforeStop)> ServeAsync(NatsConnection connection, RecordLookup lookup,
        CancellationToken stopping, CancellationToken cancellationToken)
    {
        var subscription = await connection.SubscribeCoreAsync<NatsMemoryOwner<byte>>(subject, QueueGroup, cancellationToken: cancellationToken)
            .ConfigureAwait(false);
        // Unsubscribed first: what nats-server still holds for this server goes to the others of the group, not into a closed one.
        return (ServeAsync(subscription, lookup, stopping), async () =>
        {
            await subscription.UnsubscribeAsync().ConfigureAwait(false);
        });
    }

    private async Task ServeAsync(INatsSub<NatsMemoryOwner<byte>> subscription, RecordLookup lookup, CancellationToken stopping)
    {
        try
        {
            await foreach (var message in subscription.Msgs.ReadAllAsync(stopping).ConfigureAwait(false))
                await AnswerAsync(message, lookup, stopping).ConfigureAwait(false);
        }
        catch (OperationCanceledException) when (stopping.IsCancellationRequested)
        {
        }
        finally
        {
            // Out of the queue group whatever ended the loop: requests go to the group's other servers, not to one that stopped.
            await subscription.DisposeAsync().ConfigureAwait(false);
        }
    }

    private async Task AnswerAsync(NatsMsg<NatsMemoryOwner<byte>> message, RecordLookup lookup, CancellationToken stopping)
    {
        using var body = message.Data;
        try
        {
            if (string.IsNullOrEmpty(message.ReplyTo))
                throw new IntegrationException(ErrorCodes.MalformedMessage, "The request has no inbox to answer to.");
            if (body.Length > MaxMessageBytes)
                throw new IntegrationException(ErrorCodes.FrameTooLarge, $"The request is {body.Length:N0} bytes, over the maximum of {MaxMessageBytes:N0}.");
            using var response = new PooledBufferStream();
            using (var request = MemoryStreams.ReadOnly(body.Memory))
                await RecordService.AnswerAsync(lookup, request, response, stopping).ConfigureAwait(false);
            await message.ReplyAsync<ReadOnlyMemory<byte>>(response.WrittenMemory, cancellationToken: stopping).ConfigureAwait(false);
            CountAnswered();
        }
        catch (IntegrationException e)
        {
            CountRefused();
            log.Warning(e.Code, $"Refused a request on '{message.Subject}': {e.Message}");
            if (!string.IsNullOrEmpty(message.ReplyTo))
                await ReplyQuietlyAsync(message, NatsConnections.Refusal(e), stopping).ConfigureAwait(false);
        }
        catch (NatsPayloadTooLargeException e) when (!string.IsNullOrEmpty(message.ReplyTo))
        {
            // The server's max_payload is below this reply (a server of one's own at its 1 MB default): a coded refusal, not silence.
            CountRefused();
            log.Warning(ErrorCodes.FrameTooLarge, $"Refused a request on '{message.Subject}': {e.Message}");
            await ReplyQuietlyAsync(message, NatsConnections.Refusal(new IntegrationException(ErrorCodes.FrameTooLarge,
                $"The reply is over nats-server's max_payload: {e.Message}")), stopping).ConfigureAwait(false);
        }
        catch (NatsException e)
        {
            // The connection went mid-answer (a broker restart): the request is lost, as core NATS promises; its client asks again.
            log.Warning(ErrorCodes.TransferFailed, $"A request on '{message.Subject}' was not answered: {e.Message}");
        }
        catch (Exception e) when (e is not OperationCanceledException)
        {
            // Whatever it was, this request is refused with a code and the server goes on for the others.
            CountRefused();
            log.Warning(ErrorCodes.Unexpected, $"Refused a request on '{message.Subject}' after an unexpected error: {e.Message}");
            if (!string.IsNullOrEmpty(message.ReplyTo))
                await ReplyQuietlyAsync(message, NatsConnections.Refusal(new IntegrationException(ErrorCodes.Unexpected, e.Message)), stopping).ConfigureAwait(false);
        }
    }

    private async Task ReplyQuietlyAsync(NatsMsg<NatsMemoryOwner<byte>> message, NatsHeaders refusal, CancellationToken stopping)
    {
        try
        {
            await message.ReplyAsync(headers: refusal, cancellationToken: stopping).ConfigureAwait(false);
        }
        catch (NatsException e)
        {
            log.Warning(ErrorCodes.TransferFailed, $"A refusal on '{message.Subject}' could not be sent: {e.Message}");
        }
    }
}
