using NATS.Client.JetStream;
using NATS.Client.JetStream.Models;

namespace IntegrationTasks.Queues.Nats;

/// <summary>
/// JetStream's side of the durable transport: a work-queue stream of requests (a message leaves it once a server acknowledged it)
/// and a work-queue stream of replies with a subject per client, both on disk; a publish is stored once per message id within
/// <see cref="DuplicateWindow"/>. nats-server 2.9 takes one filter subject a consumer (FilterSubjects came with 2.10).
/// </summary>
internal static class JetStreamTopology
{
    public const string RequestStream = "INTEGRATIONTASKS_REQUESTS";
    public const string ReplyStream = "INTEGRATIONTASKS_REPLIES";
    public const string RequestSubject = "integrationtasks.js.requests";
    public const string ServerConsumer = "servers";

    /// <summary>Which batch a request asks for (and its reply answers).</summary>
    public const string BatchHeader = "IntegrationTasks-Batch";

    /// <summary>The request's id: the client's run and the batch (its message id, and its reply's, so either is stored once).</summary>
    public const string RequestIdHeader = "IntegrationTasks-Request";

    /// <summary>Where the request's reply goes: its client's subject of the replies' stream.</summary>
    public const string ReplySubjectHeader = "IntegrationTasks-Reply-To";

    public static readonly TimeSpan DuplicateWindow = TimeSpan.FromMinutes(2);

    /// <summary>
    /// How long a delivered message may stay unacknowledged before JetStream delivers it again: what a killed server's (or
    /// client's) messages in hand wait before another takes them. A batch takes milliseconds, so this is all waiting.
    /// </summary>
    public static readonly TimeSpan AckWait = TimeSpan.FromSeconds(10);

    /// <summary>
    /// A client's replies, by its run and its number: clients of several machines (ClientMachines) run at once with the same numbers,
    /// and a client acknowledges every reply on its subject, its own or not.
    /// </summary>
    public static string ReplySubject(string runId, int client) => $"integrationtasks.js.replies.{runId}.{client}";
    public static string ClientConsumer(string runId, int client) => $"client-{runId}-{client}";

    public static async Task EnsureStreamsAsync(INatsJSContext js, CancellationToken cancellationToken)
    {
        await js.CreateOrUpdateStreamAsync(new StreamConfig(RequestStream, [RequestSubject])
        {
            Retention = StreamConfigRetention.Workqueue, Storage = StreamConfigStorage.File, DuplicateWindow = DuplicateWindow,
        }, cancellationToken).ConfigureAwait(false);
        await js.CreateOrUpdateStreamAsync(new StreamConfig(ReplyStream, ["integrationtasks.js.replies.>"])
        {
            Retention = StreamConfigRetention.Workqueue, Storage = StreamConfigStorage.File, DuplicateWindow = DuplicateWindow,
        }, cancellationToken).ConfigureAwait(false);
    }

    public static ValueTask<INatsJSConsumer> ServerConsumerAsync(INatsJSContext js, int maxAckPending, CancellationToken cancellationToken) =>
        js.CreateOrUpdateConsumerAsync(RequestStream, new ConsumerConfig(ServerConsumer)
        {
            DurableName = ServerConsumer, AckPolicy = ConsumerConfigAckPolicy.Explicit, AckWait = AckWait, MaxAckPending = maxAckPending,
        }, cancellationToken);

    public static ValueTask<INatsJSConsumer> ClientConsumerAsync(INatsJSContext js, string runId, int client, int maxAckPending, CancellationToken cancellationToken) =>
        js.CreateOrUpdateConsumerAsync(ReplyStream, new ConsumerConfig(ClientConsumer(runId, client))
        {
            DurableName = ClientConsumer(runId, client), FilterSubject = ReplySubject(runId, client), AckPolicy = ConsumerConfigAckPolicy.Explicit,
            // A run that fails leaves its consumer: the broker removes it once idle (well beyond a broker's restart, which it must outlive).
            InactiveThreshold = TimeSpan.FromMinutes(10),
            AckWait = AckWait, MaxAckPending = maxAckPending,
        }, cancellationToken);
}
