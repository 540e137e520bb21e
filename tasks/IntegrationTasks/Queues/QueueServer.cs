using IntegrationTasks.Data;
using IntegrationTasks.Transfer;
using IntegrationTasks.Wire;
using RabbitMQ.Client;
using RabbitMQ.Client.Events;

namespace IntegrationTasks.Queues;

/// <summary>
/// The series' RabbitMQServer with a push consumer: each request message (a batch of IDs) is
/// answered with the source's lookups and the response published to the request's reply queue with
/// its correlation id. The request is acknowledged only after that (confirmed, when durable), so a
/// server killed mid-batch leaves it to be redelivered. A message that cannot be processed is
/// rejected to the dead-letter queue with a coded warning; the consumer goes on.
/// </summary>
public sealed class QueueServer(RecordSource source, BrokerOptions broker, QueueTopology topology, IEventLog log)
{
    public int Prefetch { get; init; } = 8;
    public int MaxMessageBytes { get; init; } = SettingDefaults.MaxFrameBytes;

    // Cancelled first when the server stops: a handler mid-lookup or mid-publish gives up without acknowledging,
    // so the broker redelivers its request. (RabbitMQ.Client 7.2.1 made cancelling a confirmed publish safe.)
    private readonly CancellationTokenSource _stopping = new();
    private long _answered;
    private long _rejected;
    private long _waiting = -1;

    /// <summary>Requests in the broker's queue not yet delivered to this server, sampled every 100 ms; null before the first sample.</summary>
    public long? RequestsWaiting => Interlocked.Read(ref _waiting) is var waiting and >= 0 ? waiting : null;
    public long Answered => Interlocked.Read(ref _answered);
    public long Rejected => Interlocked.Read(ref _rejected);

    public async Task<Func<CancellationToken, Task>> StartAsync(CancellationToken cancellationToken)
    {
        var lookup = await source.OpenLookupAsync(cancellationToken).ConfigureAwait(false);
        Session session;
        try
        {
            session = await OpenSessionAsync(lookup, cancellationToken).ConfigureAwait(false);
        }
        catch
        {
            await lookup.DisposeAsync().ConfigureAwait(false);
            throw;
        }
        return async stop =>
        {
            try
            {
                // A broker that goes away (restarted, or its connection cut) is connected to again until the server is stopped: the
                // requests it holds are delivered again to the new consumer.
                while (await Task.WhenAny(session.Lost, stop.WhenCancelledAsync()).ConfigureAwait(false) == session.Lost)
                {
                    log.Warning(ErrorCodes.ConnectionLost, $"The connection to RabbitMQ was lost ({await session.Lost.ConfigureAwait(false)}); connecting again.");
                    await session.CloseAsync().ConfigureAwait(false);
                    if (await ReconnectAsync(lookup, stop).ConfigureAwait(false) is not { } next)
                        return;
                    session = next;
                    log.Info("Connected to RabbitMQ again; serving.");
                }
                await _stopping.CancelAsync().ConfigureAwait(false);
                await session.CloseAsync().ConfigureAwait(false);
            }
            finally
            {
                await lookup.DisposeAsync().ConfigureAwait(false);
            }
        };
    }

    /// <summary>Connects again, every second until it answers; null once the server is stopped.</summary>
    private async Task<Session?> ReconnectAsync(RecordLookup lookup, CancellationToken stop)
    {
        while (true)
        {
            try
            {
                await Task.Delay(TimeSpan.FromSeconds(1), stop).ConfigureAwait(false);
                return await OpenSessionAsync(lookup, stop).ConfigureAwait(false);
            }
            catch (OperationCanceledException) when (stop.IsCancellationRequested)
            {
                return null;
            }
            catch (Exception e) when (e is IntegrationException or RabbitMQ.Client.Exceptions.OperationInterruptedException
                                          or RabbitMQ.Client.Exceptions.AlreadyClosedException or IOException)
            {
                // Still away (or still starting): asked again in a second.
            }
        }
    }

    /// <summary>One connection's consumer: its channel, and the depth sampled on a channel of its own.</summary>
    private sealed class Session(IConnection connection, IChannel channel, IChannel probe, Task sampling, CancellationTokenSource samplingStop, Task<string> lost)
    {
        /// <summary>Completes with the reason when the broker closes the connection or it breaks (not when this server closes it).</summary>
        public Task<string> Lost => lost;

        public async Task CloseAsync()
        {
            await samplingStop.CancelAsync().ConfigureAwait(false);
            await sampling.ConfigureAwait(false);
            await CloseQuietlyAsync(probe.CloseAsync).ConfigureAwait(false);
            await CloseQuietlyAsync(channel.CloseAsync).ConfigureAwait(false);
            await CloseQuietlyAsync(connection.CloseAsync).ConfigureAwait(false);
            connection.Dispose();
            samplingStop.Dispose();
        }

        /// <summary>A close the broker may have done already (it went away): nothing left to close is not an error.</summary>
        private static async Task CloseQuietlyAsync(Func<CancellationToken, Task> close)
        {
            try
            {
                await close(CancellationToken.None).ConfigureAwait(false);
            }
            catch (Exception e) when (e is RabbitMQ.Client.Exceptions.AlreadyClosedException or RabbitMQ.Client.Exceptions.OperationInterruptedException or IOException)
            {
            }
        }
    }

    private async Task<Session> OpenSessionAsync(RecordLookup lookup, CancellationToken cancellationToken)
    {
        var connection = await broker.ConnectAsync("IntegrationTasks server", cancellationToken).ConfigureAwait(false);
        try
        {
            var lost = new TaskCompletionSource<string>(TaskCreationOptions.RunContinuationsAsynchronously);
            connection.ConnectionShutdownAsync += (_, shutdown) =>
            {
                if (shutdown.Initiator != ShutdownInitiator.Application)
                    lost.TrySetResult(shutdown.ReplyText);
                return Task.CompletedTask;
            };
            var channel = await connection.CreateChannelAsync(topology.ChannelOptions(Prefetch * 2), cancellationToken).ConfigureAwait(false);
            await topology.DeclareAsync(channel, topology.RequestQueue, cancellationToken).ConfigureAwait(false);
            await channel.BasicQosAsync(0, (ushort)Prefetch, global: false, cancellationToken).ConfigureAwait(false);
            var consumer = new AsyncEventingBasicConsumer(channel);
            consumer.ReceivedAsync += (_, delivery) => HandleAsync(channel, lookup, delivery);
            await channel.BasicConsumeAsync(topology.RequestQueue, autoAck: false, consumer, cancellationToken).ConfigureAwait(false);
            var probe = await connection.CreateChannelAsync(cancellationToken: cancellationToken).ConfigureAwait(false);
            var samplingStop = CancellationTokenSource.CreateLinkedTokenSource(_stopping.Token);
            return new Session(connection, channel, probe, SampleQueueDepthAsync(probe, samplingStop.Token), samplingStop, lost.Task);
        }
        catch
        {
            connection.Dispose();
            throw;
        }
    }

    /// <summary>
    /// The request queue's depth, asked of the broker every 100 ms on a channel of its own (a passive declare: one round trip): how
    /// far the clients' requests run ahead of this server's one consumer.
    /// </summary>
    private async Task SampleQueueDepthAsync(IChannel probe, CancellationToken stopping)
    {
        using var timer = new PeriodicTimer(TimeSpan.FromMilliseconds(100));
        try
        {
            while (await timer.WaitForNextTickAsync(stopping).ConfigureAwait(false))
            {
                var queue = await probe.QueueDeclarePassiveAsync(topology.RequestQueue, stopping).ConfigureAwait(false);
                Interlocked.Exchange(ref _waiting, queue.MessageCount);
            }
        }
        catch (OperationCanceledException) when (stopping.IsCancellationRequested)
        {
        }
        catch (Exception e) when (e is RabbitMQ.Client.Exceptions.OperationInterruptedException or RabbitMQ.Client.Exceptions.AlreadyClosedException)
        {
            // The broker went away: the consumer's own handling reports that; the depth is simply no longer sampled.
            Interlocked.Exchange(ref _waiting, -1);
        }
    }

    private async Task HandleAsync(IChannel channel, RecordLookup lookup, BasicDeliverEventArgs delivery)
    {
        var correlation = delivery.BasicProperties.CorrelationId;
        var replyTo = delivery.BasicProperties.ReplyTo;
        try
        {
            if (delivery.Body.Length > MaxMessageBytes)
                throw new IntegrationException(ErrorCodes.FrameTooLarge,
                    $"The request is {delivery.Body.Length:N0} bytes, over the maximum of {MaxMessageBytes:N0}.");
            if (string.IsNullOrEmpty(replyTo) || string.IsNullOrEmpty(correlation))
                throw new IntegrationException(ErrorCodes.MalformedMessage, "The request has no reply queue or correlation id.");
            using var response = new PooledBufferStream();
            // The body belongs to the client library only during this handler: it is read here, not kept.
            using (var request = new MemoryStream(delivery.Body.ToArray(), writable: false))
                await RecordService.AnswerAsync(lookup, request, response, _stopping.Token).ConfigureAwait(false);
            await channel.BasicPublishAsync("", replyTo, mandatory: true, topology.Properties(correlation, replyTo: null),
                response.WrittenMemory, _stopping.Token).ConfigureAwait(false);
            await channel.BasicAckAsync(delivery.DeliveryTag, multiple: false).ConfigureAwait(false);
            Interlocked.Increment(ref _answered);
        }
        catch (OperationCanceledException) when (_stopping.IsCancellationRequested)
        {
            // Stopping: not acknowledged, so the request goes back to the queue for the next consumer.
        }
        catch (Exception e) when (e is RabbitMQ.Client.Exceptions.OperationInterruptedException or RabbitMQ.Client.Exceptions.AlreadyClosedException)
        {
            // The broker closed the channel mid-answer (stopping or restarting): not acknowledged, so it delivers the request again.
        }
        catch (IntegrationException e)
        {
            Interlocked.Increment(ref _rejected);
            log.Warning(e.Code, $"Rejected request {correlation ?? "(no id)"} to {QueueTopology.DeadLetterQueue(topology.RequestQueue)}: {e.Message}");
            await channel.BasicRejectAsync(delivery.DeliveryTag, requeue: false).ConfigureAwait(false);
        }
        catch (Exception e) when (e is not RabbitMQ.Client.Exceptions.PublishException and not RabbitMQ.Client.Exceptions.AlreadyClosedException)
        {
            Interlocked.Increment(ref _rejected);
            log.Warning(ErrorCodes.Unexpected, $"Rejected request {correlation ?? "(no id)"} after an unexpected error: {e.Message}");
            await channel.BasicRejectAsync(delivery.DeliveryTag, requeue: false).ConfigureAwait(false);
        }
        catch (RabbitMQ.Client.Exceptions.PublishException e)
        {
            Interlocked.Increment(ref _rejected);
            log.Warning(ErrorCodes.TransferFailed, $"The response to {correlation} could not be delivered to '{replyTo}' ({e.Message}); request dead-lettered.");
            await channel.BasicRejectAsync(delivery.DeliveryTag, requeue: false).ConfigureAwait(false);
        }
    }
}
