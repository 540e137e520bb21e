using System.Buffers.Binary;
using System.Text;
using NetMQ;

namespace IntegrationTasks.Queues.ZeroMq;

/// <summary>
/// The messages on the wire. A request's last frame is the series' XML request; a DEALER client puts the batch's number before it (4
/// bytes, little-endian), a REQ socket its empty delimiter. The server answers with everything before the last frame as it came (the
/// ROUTER's envelope), then a status frame (empty, or "ITxxxx: why" when it refused the request) and the series' XML response.
/// </summary>
internal static class ZeroMqFrames
{
    public static byte[] BatchNumber(int batch)
    {
        var bytes = new byte[sizeof(int)];
        BinaryPrimitives.WriteInt32LittleEndian(bytes, batch);
        return bytes;
    }

    public static int ReadBatchNumber(NetMQFrame frame) =>
        frame.MessageSize == sizeof(int) ? BinaryPrimitives.ReadInt32LittleEndian(frame.Buffer.AsSpan(0, sizeof(int)))
        : throw new IntegrationException(ErrorCodes.MalformedMessage, $"A reply's batch frame is {frame.MessageSize} bytes, not {sizeof(int)}.");

    public static NetMQFrame Status(IntegrationException? refusal) =>
        refusal is null ? NetMQFrame.Empty : new NetMQFrame(Encoding.UTF8.GetBytes(CodedError.Format(refusal)));

    /// <summary>The server's refusal of a batch, with the server's code, when the status frame holds one.</summary>
    public static void ThrowIfRefused(NetMQFrame status, int batch)
    {
        if (status.MessageSize == 0)
            return;
        throw CodedError.Refusal(Encoding.UTF8.GetString(status.Buffer, 0, status.MessageSize), batch);
    }
}
