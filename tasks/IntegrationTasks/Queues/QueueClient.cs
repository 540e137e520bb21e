using System.Globalization;
using IntegrationTasks.Transfer;
using IntegrationTasks.Wire;
using RabbitMQ.Client;
using RabbitMQ.Client.Events;

namespace IntegrationTasks.Queues;

/// <summary>
/// The series' RabbitMQClientTest with a push consumer: one request message per batch, published
/// with a bounded number in flight (and, when durable, each confirmed by the broker); responses are
/// matched to requests by correlation id, imported, and acknowledged only after the import commits.
/// Fast: the correlation id carries this run's id and the reply queue is purged first, so nothing
/// from an aborted run is taken for an answer. Durable: the id is the batch alone, the import
/// ignores rows already there, and batches already complete in ClientTable are not asked for again —
/// so a run killed and started again ends with every row exactly once.
/// </summary>
public sealed class QueueClient(BrokerOptions broker, QueueTopology topology)
{
    public int MaxInFlight { get; init; } = SettingDefaults.MaxInFlight;
    public int MaxMessageBytes { get; init; } = SettingDefaults.MaxFrameBytes;

    /// <summary>
    /// One connection's worth: asks for <paramref name="pending"/> and imports the answers, marking each batch in <paramref name="committed"/>.
    /// A connection that closes under it (the broker, or the network between) fails the attempt with IT3006, once no import is running.
    /// </summary>
    public async Task<TransferResult> RunAsync(BatchPlan plan, BatchImporter importer, IReadOnlyList<int> pending, CommittedBatches committed,
        Action connected, CancellationToken cancellationToken)
    {
        var runId = topology.Durable ? "" : FileId();
        var done = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var outstanding = new HashSet<int>(pending);
        using var inFlight = new SemaphoreSlim(MaxInFlight);
        var importing = new SemaphoreSlim(1, 1); // not disposed: a late delivery may still touch it
        long sent = 0, received = 0;
        if (pending.Count == 0)
            return new TransferResult(0, 0);

        await using var connection = await broker.ConnectAsync("IntegrationTasks client", cancellationToken).ConfigureAwait(false);
        connected();
        connection.ConnectionShutdownAsync += (_, shutdown) =>
        {
            if (shutdown.Initiator != ShutdownInitiator.Application)
                done.TrySetException(broker.Closed($"{shutdown.ReplyText} ({shutdown.Initiator})"));
            return Task.CompletedTask;
        };
        try
        {
            return await ExchangeAsync().ConfigureAwait(false);
        }
        catch (Exception e) when (e is RabbitMQ.Client.Exceptions.AlreadyClosedException or RabbitMQ.Client.Exceptions.OperationInterruptedException or IOException)
        {
            // The client's own message carries the inner exception's stack; the broker's reason is what to say.
            var reason = e is RabbitMQ.Client.Exceptions.OperationInterruptedException { ShutdownReason: { } shutdown } ? shutdown.ReplyText : e.Message;
            throw broker.Closed(reason, e);
        }
        finally
        {
            // No import of this attempt outlives it: the next one uses the same database connection.
            await importing.WaitAsync(TimeSpan.FromSeconds(60), CancellationToken.None).ConfigureAwait(false);
        }

        async Task<TransferResult> ExchangeAsync()
        {
            await using var publisher = await connection.CreateChannelAsync(topology.ChannelOptions(MaxInFlight * 2), cancellationToken).ConfigureAwait(false);
            await using var consumerChannel = await connection.CreateChannelAsync(cancellationToken: cancellationToken).ConfigureAwait(false);
            await topology.DeclareAsync(publisher, topology.RequestQueue, cancellationToken).ConfigureAwait(false);
            await topology.DeclareAsync(publisher, topology.ReplyQueue, cancellationToken).ConfigureAwait(false);
            if (!topology.Durable)
                await publisher.QueuePurgeAsync(topology.ReplyQueue, cancellationToken).ConfigureAwait(false);
            await consumerChannel.BasicQosAsync(0, (ushort)Math.Min(MaxInFlight * 2, ushort.MaxValue), global: false, cancellationToken).ConfigureAwait(false);

            var consumer = new AsyncEventingBasicConsumer(consumerChannel);
            consumer.ReceivedAsync += async (_, delivery) =>
            {
                try
                {
                    var batch = ParseCorrelation(delivery.BasicProperties.CorrelationId, runId, plan.TotalBatches);
                    if (batch is null)
                    {
                        // Another run's answer (fast mode): not ours, and not an error.
                        await consumerChannel.BasicAckAsync(delivery.DeliveryTag, multiple: false).ConfigureAwait(false);
                        return;
                    }
                    if (delivery.Body.Length > MaxMessageBytes)
                        throw new IntegrationException(ErrorCodes.FrameTooLarge,
                            $"The response to batch {batch} is {delivery.Body.Length:N0} bytes, over the maximum of {MaxMessageBytes:N0}.");
                    Interlocked.Add(ref received, delivery.Body.Length);
                    bool answeredBefore;
                    lock (outstanding)
                        answeredBefore = !outstanding.Contains(batch.Value);
                    if (answeredBefore)
                    {
                        // Delivery is at least once: a server killed after publishing an answer and before acknowledging its request
                        // answers that request again. The batch is in already; importing it twice would break the fast import.
                        await consumerChannel.BasicAckAsync(delivery.DeliveryTag, multiple: false).ConfigureAwait(false);
                        return;
                    }
                    committed.Latency.Received(batch.Value);
                    await importing.WaitAsync(cancellationToken).ConfigureAwait(false);
                    try
                    {
                        using (var body = new MemoryStream(delivery.Body.ToArray(), 0, delivery.Body.Length, writable: false, publiclyVisible: true))
                            await importer.ImportAsync(body, cancellationToken).ConfigureAwait(false);
                        committed.Add(batch.Value);
                    }
                    finally
                    {
                        importing.Release();
                    }
                    await consumerChannel.BasicAckAsync(delivery.DeliveryTag, multiple: false).ConfigureAwait(false);
                    bool finished;
                    lock (outstanding)
                    {
                        if (!outstanding.Remove(batch.Value))
                            return; // answered twice while this one was imported: the check above, not this, is what skips repeats
                        finished = outstanding.Count == 0;
                    }
                    inFlight.Release();
                    if (finished)
                        done.TrySetResult();
                }
                catch (Exception e) when (e is RabbitMQ.Client.Exceptions.AlreadyClosedException or OperationCanceledException && !consumerChannel.IsOpen)
                {
                    // The channel went with the connection: the answer stays in the queue (durable) and the shutdown is what fails the attempt.
                }
                catch (Exception e)
                {
                    try
                    {
                        await consumerChannel.BasicRejectAsync(delivery.DeliveryTag, requeue: false).ConfigureAwait(false);
                    }
                    catch (RabbitMQ.Client.Exceptions.AlreadyClosedException)
                    {
                    }
                    done.TrySetException(e is IntegrationException ? e
                        : new IntegrationException(ErrorCodes.TransferFailed, $"A response could not be imported and was dead-lettered: {e.Message}", e));
                }
            };
            await consumerChannel.BasicConsumeAsync(topology.ReplyQueue, autoAck: false, consumer, cancellationToken).ConfigureAwait(false);
            importer.MarkSetupDone();

            using var buffer = new PooledBufferStream();
            foreach (var batch in pending)
            {
                await Task.WhenAny(inFlight.WaitAsync(cancellationToken), done.Task).ConfigureAwait(false);
                if (done.Task.IsCompleted)
                    break;
                cancellationToken.ThrowIfCancellationRequested();
                buffer.Reset();
                RecordXml.WriteRequest(buffer, plan.Ids(batch));
                // With confirms tracked (durable) this completes when the broker has the message safely.
                await committed.Latency.SendTurnAsync(batch, cancellationToken).ConfigureAwait(false);
                await publisher.BasicPublishAsync("", topology.RequestQueue, mandatory: true,
                    topology.Properties(Correlation(runId, batch), topology.ReplyQueue), buffer.WrittenMemory, cancellationToken).ConfigureAwait(false);
                sent += buffer.Length;
            }
            await done.Task.WaitAsync(cancellationToken).ConfigureAwait(false);
            return new TransferResult(sent, Interlocked.Read(ref received));
        }
    }

    private static string FileId() => Guid.NewGuid().ToString("N")[..12];

    private static string Correlation(string runId, int batch) =>
        runId.Length == 0 ? batch.ToString(CultureInfo.InvariantCulture) : $"{runId}:{batch.ToString(CultureInfo.InvariantCulture)}";

    /// <summary>The batch a response answers; null when it belongs to another run.</summary>
    private static int? ParseCorrelation(string? correlation, string runId, int totalBatches)
    {
        var text = correlation ?? "";
        if (runId.Length > 0)
        {
            if (!text.StartsWith(runId + ":", StringComparison.Ordinal))
                return null;
            text = text[(runId.Length + 1)..];
        }
        return int.TryParse(text, NumberStyles.None, CultureInfo.InvariantCulture, out var batch) && batch < totalBatches
            ? batch
            : throw new IntegrationException(ErrorCodes.TransferFailed, $"A response carries the correlation id '{correlation}', which answers no batch of this transfer.");
    }
}
