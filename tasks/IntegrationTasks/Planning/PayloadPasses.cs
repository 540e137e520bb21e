using System.Globalization;

namespace IntegrationTasks.Planning;

/// <summary>
/// One payload size of RunAll's: every row carries <see cref="PayloadBytes"/>, a batch holds <see cref="BatchSize"/> records (the
/// BatchSize asked for, fewer where BatchBytes would be passed), and each record count moves at most MaxRunBytes of payload.
/// </summary>
public sealed record PayloadPass(int PayloadBytes, int BatchSize, long MaxRunBytes)
{
    /// <summary>The passes of a run, in the order given: one a payload size ("0+1024+65536"; 0, the default, is the series' rows).</summary>
    public static List<PayloadPass> Plan(string payloadSizes, int batchSize, long batchBytes, long maxRunBytes)
    {
        if (batchSize < 1)
            throw new IntegrationException(ErrorCodes.InvalidParameter, $"BatchSize must be at least 1 (was {batchSize}).");
        if (batchBytes < 1 || maxRunBytes < 1)
            throw new IntegrationException(ErrorCodes.InvalidParameter,
                $"BatchBytes and MaxRunBytes must be at least 1 (were {batchBytes} and {maxRunBytes}).");
        var sizes = payloadSizes.Split('+', ';').Select(s => s.Trim()).Where(s => s.Length > 0)
            .Select(text => int.TryParse(text, NumberStyles.None, CultureInfo.InvariantCulture, out var bytes) ? bytes
                : throw new IntegrationException(ErrorCodes.InvalidParameter, $"PayloadBytes holds '{text}', which is not a whole number of bytes (0 or more)."))
            .Distinct().ToList();
        return sizes.Count == 0 ? [new PayloadPass(0, batchSize, maxRunBytes)]
            : [.. sizes.Select(bytes => new PayloadPass(bytes, Transfer.BatchBytesCheck.EffectiveBatchSize(batchSize, bytes, batchBytes), maxRunBytes))];
    }

    /// <summary>
    /// A record count as this pass runs it: without a payload as given; with one, at most MaxRunBytes of payload in whole batches (one
    /// batch at least).
    /// </summary>
    public int RecordsFor(int records) =>
        PayloadBytes == 0 ? records : Math.Max((int)Math.Min(records, MaxRunBytes / PayloadBytes) / BatchSize, 1) * BatchSize;

    /// <summary>The counts this pass runs at: each capped and made whole batches, each once, smallest first.</summary>
    public List<int> RecordCountsFor(IEnumerable<int> counts) => [.. counts.Select(RecordsFor).Distinct().Order()];

    public override string ToString() => PayloadBytes == 0 ? "no payload" : string.Create(CultureInfo.InvariantCulture, $"{PayloadBytes:N0}-byte payloads");
}
