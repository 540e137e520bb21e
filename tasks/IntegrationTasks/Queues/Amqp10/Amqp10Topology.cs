using Amqp;
using Amqp.Framing;

namespace IntegrationTasks.Queues.Amqp10;

/// <summary>
/// The AMQP 1.0 transports' queues on RabbitMQ and how their links settle. Every address is a queue the plugin declares durable
/// on attach (terminus durability 2: a non-durable target would be declared exclusive to the plugin's own channel), named apart
/// from the AMQP 0-9-1 transports' queues (whose arguments differ). Settled: at most once — requests and answers are sent
/// pre-settled, and a request is accepted as it is taken, before its work. Unsettled: at least once — a request or answer is forgotten only when accepted, so one in the hands of a process that
/// dies is delivered again; the client's duplicate-safe import makes it exactly once.
/// </summary>
internal sealed record Amqp10Topology(string RequestQueue, string ReplyQueuePrefix, bool Unsettled)
{
    public static readonly Amqp10Topology Settled = new("integrationtests.amqp10.in", "integrationtests.amqp10.out", Unsettled: false);
    public static readonly Amqp10Topology AtLeastOnce = new("integrationtests.amqp10.durable.in", "integrationtests.amqp10.durable.out", Unsettled: true);

    /// <summary>The properties' entry of an answer that refuses its request: the server's coded error ("IT2004: …").</summary>
    public const string ErrorProperty = "IntegrationTasks-Error";

    public static string Address(string queue) => "/queue/" + queue;

    public string RequestAddress => Address(RequestQueue);

    /// <summary>A client's own reply queue: by its number and, with several client machines, its machine (the same on every run).</summary>
    public string ReplyAddress(int client, string machine) =>
        Address($"{ReplyQueuePrefix}.{client.ToString(System.Globalization.CultureInfo.InvariantCulture)}{(machine.Length > 0 ? "." + machine : "")}");

    public SenderLink Sender(Session session, string name, string address) => new(session, name, new Attach
    {
        Source = new Source(), Target = new Target { Address = address, Durable = 2 },
        SndSettleMode = Unsettled ? SenderSettleMode.Unsettled : SenderSettleMode.Settled, RcvSettleMode = ReceiverSettleMode.First,
    }, null);

    /// <summary>
    /// A receiver of unsettled deliveries in both modes: pre-settled ones threw the library's credit count out of step with the
    /// broker's under load ("no credit to accept a new delivery", the connection closed). At most once, a receiver accepts a
    /// delivery as it takes it, before any work.
    /// </summary>
    public ReceiverLink Receiver(Session session, string name, string address, int credit)
    {
        var receiver = new ReceiverLink(session, name, new Attach
        {
            Source = new Source { Address = address, Durable = 2 }, Target = new Target(),
            SndSettleMode = SenderSettleMode.Unsettled, RcvSettleMode = ReceiverSettleMode.First,
        }, null);
        // Credit is the flow control: the broker sends at most this many before the receiver has settled some (auto-restored as it does).
        receiver.SetCredit(credit, autoRestore: true);
        return receiver;
    }

    public Message Message(ReadOnlyMemory<byte> body, string? messageId, string? correlationId, string? replyTo, string? subject) => new()
    {
        Header = new Header { Durable = Unsettled },
        Properties = new Properties { MessageId = messageId, CorrelationId = correlationId, ReplyTo = replyTo, Subject = subject },
        BodySection = new Amqp.Framing.Data { Binary = body.ToArray() },
    };

    /// <summary>A message's body as bytes: a Data section (what the suite sends); anything else is a malformed message.</summary>
    public static byte[] Body(Message message) =>
        message.BodySection is Amqp.Framing.Data { Binary: { } bytes } ? bytes
        : throw new IntegrationException(ErrorCodes.MalformedMessage, "The AMQP 1.0 message has no binary data section.");

    public static string? Refusal(Message message) =>
        message.ApplicationProperties?.Map.ContainsKey(ErrorProperty) == true ? message.ApplicationProperties[ErrorProperty] as string : null;
}
