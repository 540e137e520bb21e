using System.Text;

namespace IntegrationTasks.Wcf.NetTcp;

/// <summary>
/// The records of the .NET Message Framing protocol ([MC-NMF]) that net.tcp's duplex session mode uses
/// with security None: the client's preamble (version, mode, via, encoding, preamble end), the server's
/// preamble ack, sized envelopes both ways, end, and fault. Sizes are "mbint": 7 bits a byte, low first,
/// the high bit saying another byte follows.
/// </summary>
public static class MessageFraming
{
    public const byte Version = 0x00;
    public const byte Mode = 0x01;
    public const byte Via = 0x02;
    public const byte KnownEncoding = 0x03;
    public const byte SizedEnvelope = 0x06;
    public const byte End = 0x07;
    public const byte Fault = 0x08;
    public const byte UpgradeRequest = 0x09;
    public const byte UpgradeResponse = 0x0A;

    /// <summary>The upgrade net.tcp's transport security with a certificate asks for: TLS over the connection ([MC-NMF] 2.2.3.7).</summary>
    public const string SslTlsUpgrade = "application/ssl-tls";
    public const byte PreambleAck = 0x0B;
    public const byte PreambleEnd = 0x0C;

    public const byte DuplexMode = 0x02;
    public const byte BinarySessionEncoding = 0x08;
    public const int MaxViaBytes = 2048;

    private const string FaultBase = "http://schemas.microsoft.com/ws/2006/05/framing/faults/";
    public const string UnsupportedVersionFault = FaultBase + "UnsupportedVersion";
    public const string UnsupportedModeFault = FaultBase + "UnsupportedMode";
    public const string ContentTypeInvalidFault = FaultBase + "ContentTypeInvalid";
    public const string EndpointNotFoundFault = FaultBase + "EndpointNotFound";
    public const string ViaTooLongFault = FaultBase + "ViaTooLong";
    public const string MaxMessageSizeExceededFault = FaultBase + "MaxMessageSizeExceededFault";
    public const string UpgradeInvalidFault = FaultBase + "UpgradeInvalid";

    public static void WriteSize(Stream output, int size)
    {
        var value = (uint)size;
        do
        {
            var b = (byte)(value & 0x7F);
            value >>= 7;
            output.WriteByte(value != 0 ? (byte)(b | 0x80) : b);
        }
        while (value != 0);
    }

    /// <summary>A sized envelope's record type and size: at most 6 bytes.</summary>
    public const int MaxHeaderBytes = 6;

    public static byte[] SizedEnvelopeHeader(int size)
    {
        using var header = new MemoryStream(MaxHeaderBytes);
        header.WriteByte(SizedEnvelope);
        WriteSize(header, size);
        return header.ToArray();
    }

    /// <summary>A fault record: the client reads it as the reason its connection was refused.</summary>
    public static byte[] FaultRecord(string fault)
    {
        using var buffer = new MemoryStream();
        buffer.WriteByte(Fault);
        var text = Encoding.UTF8.GetBytes(fault);
        WriteSize(buffer, text.Length);
        buffer.Write(text);
        return buffer.ToArray();
    }
}

/// <summary>A framing violation: the connection is answered with a fault record and closed.</summary>
public sealed class FramingException(string code, string message, string fault) : IntegrationException(code, message)
{
    public string Fault { get; } = fault;
}

/// <summary>Reads framing records from a connection (buffered; every read bounded by what the record declares).</summary>
public sealed class FramingReader(Stream input)
{
    private readonly byte[] _one = new byte[1];

    /// <summary>The next byte, or -1 at the end of the stream.</summary>
    public async ValueTask<int> ReadByteOrEndAsync(CancellationToken cancellationToken) =>
        await input.ReadAsync(_one, cancellationToken).ConfigureAwait(false) == 0 ? -1 : _one[0];

    public async ValueTask<byte> ReadByteAsync(CancellationToken cancellationToken) =>
        await ReadByteOrEndAsync(cancellationToken).ConfigureAwait(false) is var b and >= 0 ? (byte)b
            : throw new IntegrationException(ErrorCodes.TruncatedFrame, "The connection ended inside a framing record.");

    public async ValueTask<int> ReadSizeAsync(CancellationToken cancellationToken)
    {
        var value = 0;
        for (var shift = 0; shift < 35; shift += 7)
        {
            var b = await ReadByteAsync(cancellationToken).ConfigureAwait(false);
            if (shift == 28 && (b & 0xF8) != 0)
                break; // more than 31 bits
            value |= (b & 0x7F) << shift;
            if ((b & 0x80) == 0)
                return value;
        }
        throw new FramingException(ErrorCodes.InvalidFrameLength, "A record declares a size that does not fit in 31 bits.", MessageFraming.MaxMessageSizeExceededFault);
    }

    public async ValueTask ReadExactlyAsync(Memory<byte> buffer, CancellationToken cancellationToken)
    {
        try
        {
            await input.ReadExactlyAsync(buffer, cancellationToken).ConfigureAwait(false);
        }
        catch (EndOfStreamException e)
        {
            throw new IntegrationException(ErrorCodes.TruncatedFrame, $"The connection ended inside a record of {buffer.Length:N0} bytes.", e);
        }
    }

    /// <summary>
    /// Reads a client's preamble after its first byte (the version record's type) and returns its Via, and the upgrade it asks for
    /// (null: none; then the preamble has ended). Accepted: version 1.0, duplex mode, binary session encoding.
    /// </summary>
    public async Task<(string Via, string? Upgrade)> ReadPreambleAsync(CancellationToken cancellationToken)
    {
        var major = await ReadByteAsync(cancellationToken).ConfigureAwait(false);
        var minor = await ReadByteAsync(cancellationToken).ConfigureAwait(false);
        if (major != 1 || minor != 0)
            throw new FramingException(ErrorCodes.MalformedMessage, $"Framing version {major}.{minor} is not supported (1.0 is).", MessageFraming.UnsupportedVersionFault);
        await ExpectAsync(MessageFraming.Mode, "a mode record", MessageFraming.UnsupportedModeFault, cancellationToken).ConfigureAwait(false);
        if (await ReadByteAsync(cancellationToken).ConfigureAwait(false) is var mode && mode != MessageFraming.DuplexMode)
            throw new FramingException(ErrorCodes.MalformedMessage, $"Mode {mode} is not supported (duplex, 2, is).", MessageFraming.UnsupportedModeFault);
        await ExpectAsync(MessageFraming.Via, "a via record", MessageFraming.EndpointNotFoundFault, cancellationToken).ConfigureAwait(false);
        var length = await ReadSizeAsync(cancellationToken).ConfigureAwait(false);
        if (length > MessageFraming.MaxViaBytes)
            throw new FramingException(ErrorCodes.FrameTooLarge, $"The via is {length:N0} bytes, over {MessageFraming.MaxViaBytes:N0}.", MessageFraming.ViaTooLongFault);
        var via = new byte[length];
        await ReadExactlyAsync(via, cancellationToken).ConfigureAwait(false);
        await ExpectAsync(MessageFraming.KnownEncoding, "a known-encoding record", MessageFraming.ContentTypeInvalidFault, cancellationToken).ConfigureAwait(false);
        if (await ReadByteAsync(cancellationToken).ConfigureAwait(false) is var encoding && encoding != MessageFraming.BinarySessionEncoding)
            throw new FramingException(ErrorCodes.MalformedMessage, $"Encoding {encoding} is not supported (binary session, 8, is).", MessageFraming.ContentTypeInvalidFault);
        var next = await ReadByteAsync(cancellationToken).ConfigureAwait(false);
        if (next == MessageFraming.UpgradeRequest)
        {
            var upgradeLength = await ReadSizeAsync(cancellationToken).ConfigureAwait(false);
            if (upgradeLength > MessageFraming.MaxViaBytes)
                throw new FramingException(ErrorCodes.FrameTooLarge, $"The upgrade's name is {upgradeLength:N0} bytes, over {MessageFraming.MaxViaBytes:N0}.", MessageFraming.UpgradeInvalidFault);
            var upgrade = new byte[upgradeLength];
            await ReadExactlyAsync(upgrade, cancellationToken).ConfigureAwait(false);
            return (Encoding.UTF8.GetString(via), Encoding.UTF8.GetString(upgrade));
        }
        await EndPreambleAsync(next).ConfigureAwait(false);
        return (Encoding.UTF8.GetString(via), null);
    }

    /// <summary>After an upgrade, on its secured stream: the preamble's end (no second upgrade).</summary>
    public async Task ReadPreambleEndAsync(CancellationToken cancellationToken) =>
        await EndPreambleAsync(await ReadByteAsync(cancellationToken).ConfigureAwait(false)).ConfigureAwait(false);

    private static Task EndPreambleAsync(byte next) => next == MessageFraming.PreambleEnd ? Task.CompletedTask
        : throw new FramingException(ErrorCodes.MalformedMessage, $"Record type {next} where the preamble should end.", MessageFraming.ContentTypeInvalidFault);

    private async Task ExpectAsync(byte type, string what, string fault, CancellationToken cancellationToken)
    {
        if (await ReadByteAsync(cancellationToken).ConfigureAwait(false) is var b && b != type)
            throw new FramingException(ErrorCodes.MalformedMessage, $"Record type {b} where {what} was expected.", fault);
    }
}
