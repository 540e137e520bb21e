using System.Runtime.Serialization;
using System.ServiceModel;
using System.ServiceModel.Channels;
using System.Xml;

namespace IntegrationTasks.Wcf.NetTcp;

/// <summary>
/// Turns a request envelope into a call of the service and its reply envelope, as WCF's dispatcher would
/// for the data-contract operations of <see cref="IIntegrationTestsService"/>: the action names the
/// operation, the body's wrapper element holds its parameters, the reply's body is
/// &lt;OpResponse&gt;&lt;OpResult&gt;…, its action the request's + "Response", its RelatesTo the request's
/// MessageId. A request the service cannot take is answered with a fault whose reason is a coded message.
/// </summary>
public sealed class NetTcpDispatcher(IIntegrationTestsService service)
{
    private const string FaultAction = "http://www.w3.org/2005/08/addressing/soap/fault";
    private static readonly DataContractSerializer OneRecord = new(typeof(RecordData), "GetRecordResult", ServiceNames.Namespace);
    private static readonly Dictionary<string, DataContractSerializer> Batches = new()
    {
        ["GetRecords"] = new(typeof(RecordData[]), "GetRecordsResult", ServiceNames.Namespace),
        ["GetRecordsConcurrently"] = new(typeof(RecordData[]), "GetRecordsConcurrentlyResult", ServiceNames.Namespace),
    };

    public sealed record Request(string Action, UniqueId? MessageId, MessageVersion Version, string Operation, int[] Arguments);

    /// <summary>Reads what the dispatcher needs from a request; the message can be closed afterwards.</summary>
    /// <exception cref="IntegrationException">When the envelope is not a call of this service (the caller answers with a fault).</exception>
    public static Request Read(Message message)
    {
        var action = message.Headers.Action ?? "";
        var operation = action.StartsWith(ServiceNames.Action(""), StringComparison.Ordinal) ? action[ServiceNames.Action("").Length..] : "";
        string[] parameters = operation switch
        {
            "GetRecord" => ["id"],
            "GetRecords" or "GetRecordsConcurrently" => ["firstId", "count"],
            _ => throw new IntegrationException(ErrorCodes.MalformedMessage, $"The action '{action}' names no operation of {ServiceNames.Contract}."),
        };
        try
        {
            using var reader = message.GetReaderAtBodyContents();
            reader.ReadStartElement(operation, ServiceNames.Namespace);
            var arguments = parameters.Select(name => reader.ReadElementContentAsInt(name, ServiceNames.Namespace)).ToArray();
            return new Request(action, message.Headers.MessageId, message.Version, operation, arguments);
        }
        catch (Exception e) when (e is XmlException or FormatException or InvalidOperationException)
        {
            throw new IntegrationException(ErrorCodes.MalformedXml, $"The body of {operation} is not <{operation}> with {string.Join(", ", parameters)}: {e.Message}", e);
        }
    }

    /// <summary>Calls the operation and builds its reply (a fault when the service refuses the call).</summary>
    public async Task<Message> AnswerAsync(Request request)
    {
        try
        {
            Message reply = request.Operation switch
            {
                "GetRecord" => Reply(request, OneRecord, await service.GetRecord(request.Arguments[0]).ConfigureAwait(false)),
                "GetRecords" => Reply(request, Batches["GetRecords"], await service.GetRecords(request.Arguments[0], request.Arguments[1]).ConfigureAwait(false)),
                _ => Reply(request, Batches["GetRecordsConcurrently"], await service.GetRecordsConcurrently(request.Arguments[0], request.Arguments[1]).ConfigureAwait(false)),
            };
            return reply;
        }
        catch (FaultException e)
        {
            return Fault(request.Version, request.MessageId, e.Message);
        }
    }

    public static Message Fault(MessageVersion version, UniqueId? relatesTo, string reason)
    {
        var message = Message.CreateMessage(version, FaultCode.CreateSenderFaultCode(new FaultCode("InvalidRequest", ServiceNames.Namespace)), reason, FaultAction);
        if (relatesTo is not null)
            message.Headers.RelatesTo = relatesTo;
        return message;
    }

    private static Message Reply(Request request, DataContractSerializer serializer, object? result)
    {
        var reply = Message.CreateMessage(request.Version, request.Action + "Response", new ResultWriter(request.Operation, serializer, result));
        if (request.MessageId is not null)
            reply.Headers.RelatesTo = request.MessageId;
        return reply;
    }

    private sealed class ResultWriter(string operation, DataContractSerializer serializer, object? result) : BodyWriter(isBuffered: true)
    {
        protected override void OnWriteBodyContents(XmlDictionaryWriter writer)
        {
            writer.WriteStartElement(operation + "Response", ServiceNames.Namespace);
            serializer.WriteObject(writer, result);
            writer.WriteEndElement();
        }
    }
}
