using Google.Protobuf.WellKnownTypes;
using IntegrationTasks.Grpc.Contract;

namespace IntegrationTasks.Grpc;

/// <summary>
/// Between the data layer's rows and the protobuf messages, losslessly: a double stays a double, CreationDate's
/// 100 ns ticks become a Timestamp's nanoseconds (the value is carried as if UTC, since it has no time zone, and
/// comes back unspecified), and NULL stays apart from "" through the optional fields' presence.
/// </summary>
public static class RecordMessages
{
    public static Record ToMessage(this ServiceRecord record)
    {
        var message = new Record
        {
            Id = record.Id, Desc = record.Desc, Value = record.Value,
            CreationDate = Timestamp.FromDateTime(DateTime.SpecifyKind(record.CreationDate, DateTimeKind.Utc)),
        };
        if (record.StringField1 is not null)
            message.StringField1 = record.StringField1;
        if (record.StringField2 is not null)
            message.StringField2 = record.StringField2;
        if (record.Payload is not null)
            message.PayloadBytes = Google.Protobuf.UnsafeByteOperations.UnsafeWrap(record.Payload); // the row's own array, never changed
        else if (record.PayloadText is not null)
            message.PayloadText = record.PayloadText;
        return message;
    }

    public static ServiceRecord ToRecord(this Record message) => new(
        message.Id, message.Desc, message.Value, DateTime.SpecifyKind(message.CreationDate.ToDateTime(), DateTimeKind.Unspecified),
        message.HasStringField1 ? message.StringField1 : null, message.HasStringField2 ? message.StringField2 : null,
        message.HasPayloadBytes ? Bytes(message.PayloadBytes) : null, message.HasPayloadText ? message.PayloadText : null);

    /// <summary>The bytes a parsed message holds, taken rather than copied where they fill an array of their own (the message is not used after).</summary>
    private static byte[] Bytes(Google.Protobuf.ByteString bytes) =>
        System.Runtime.InteropServices.MemoryMarshal.TryGetArray(bytes.Memory, out var segment) && segment is { Offset: 0, Array: { } array } && segment.Count == array.Length
            ? array
            : bytes.ToByteArray();

    public static BatchReply ToReply(int firstId, IEnumerable<ServiceRecord> records)
    {
        var reply = new BatchReply { FirstId = firstId };
        reply.Records.AddRange(records.Select(ToMessage));
        return reply;
    }
}
