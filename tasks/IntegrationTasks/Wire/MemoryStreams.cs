using System.Runtime.InteropServices;

namespace IntegrationTasks.Wire;

public static class MemoryStreams
{
    /// <summary>A received message's body as a read-only stream over its own memory (no copy when it is an array's).</summary>
    public static MemoryStream ReadOnly(ReadOnlyMemory<byte> body) =>
        MemoryMarshal.TryGetArray(body, out var segment)
            ? new MemoryStream(segment.Array!, segment.Offset, segment.Count, writable: false)
            : new MemoryStream(body.ToArray(), writable: false);
}
