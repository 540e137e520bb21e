
namespace IntegrationTasks.Transfer;

/// <summary>
/// A client shares the MSBuild process, whose GC lets its large-object heap grow by hundreds of megabytes between full
/// collections: large rows moved at speed became resident memory in proportion to what a run had moved, not to what it held. Each
/// <see cref="BudgetBytes"/> of large payloads committed, a background full collection is asked for, so a client's memory follows
/// what it holds rather than what it has moved.
/// </summary>
public static class LargeRowCollection
{
    /// <summary>Large payloads committed between two collections.</summary>
    public const long BudgetBytes = 64L << 20;

    /// <summary>An object this large goes to the large-object heap (the GC's documented threshold).</summary>
    public const int LargeObjectBytes = 85_000;

    private static long _sinceCollection;

    /// <summary>Counts a committed batch's large payloads; asks for a collection once they add up to the budget.</summary>
    /// <returns>Whether a collection was asked for.</returns>
    public static bool Committed(IReadOnlyList<ServiceRecord> records)
    {
        var large = LargePayloadBytes(records);
        if (large == 0 || Interlocked.Add(ref _sinceCollection, large) < BudgetBytes)
            return false;
        Interlocked.Exchange(ref _sinceCollection, 0);
        // In the background: the run's threads go on while it marks; what it frees is what the next large rows reuse.
        GC.Collect(GC.MaxGeneration, GCCollectionMode.Forced, blocking: false);
        return true;
    }

    /// <summary>The bytes of the records' payloads that are large objects each (a text payload is two bytes a character in memory).</summary>
    public static long LargePayloadBytes(IReadOnlyList<ServiceRecord> records)
    {
        long large = 0;
        foreach (var record in records)
        {
            var bytes = record.Payload?.LongLength ?? (record.PayloadText?.Length ?? 0) * (long)sizeof(char);
            if (bytes >= LargeObjectBytes)
                large += bytes;
        }
        return large;
    }
}
