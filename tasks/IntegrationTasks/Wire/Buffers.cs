using System.Buffers;

namespace IntegrationTasks.Wire;

/// <summary>
/// Arrays for messages: pooled up to 1 MB, allocated plainly above. The shared pool keeps what it is given back, up to
/// several arrays per size per core, so a few 64 MB frames would stay resident long after the requests that needed them.
/// </summary>
internal static class Buffers
{
    public const int MaxPooledBytes = 1024 * 1024;

    public static byte[] Rent(int length) =>
        length <= MaxPooledBytes ? ArrayPool<byte>.Shared.Rent(length) : GC.AllocateUninitializedArray<byte>(length);

    public static void Return(byte[] array)
    {
        if (array.Length is > 0 and <= MaxPooledBytes)
            ArrayPool<byte>.Shared.Return(array);
    }
}
