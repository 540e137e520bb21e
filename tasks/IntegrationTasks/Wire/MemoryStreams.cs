using System.Runtime.InteropServices;

namespace IntegrationTasks.Wire;

public static class MemoryStreams
{
    /// <summary>
    /// A received message's body as a read-only stream over its own memory (no copy when it is an array's), its buffer visible to
    /// a reader that parses the bytes in place (<see cref="RecordXml.ReadResponse"/>).
    /// </summary>
    public static MemoryStream ReadOnly(ReadOnlyMemory<byte> body) =>
        MemoryMarshal.TryGetArray(body, out var segment)
            ? new MemoryStream(segment.Array!, segment.Offset, segment.Count, writable: false, publiclyVisible: true)
            : new MemoryStream(body.ToArray(), 0, body.Length, writable: false, publiclyVisible: true);
}
