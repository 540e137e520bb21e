using System.Globalization;
using IntegrationTasks.Data;

namespace IntegrationTasks.Transfer;

/// <summary>
/// A run's batches checked against the bytes they will carry, before anything is sent: a batch's payload against BatchBytes, and the
/// largest message a batch can make against the transport's own limit (a frame, a message), each refused with IT1001 naming the
/// property that raises it, never a failure mid-run.
/// </summary>
public static class BatchBytesCheck
{
    /// <summary>What a row costs on any wire beside its payload, at most (the series' six fields, markup and escaping included).</summary>
    public const int RowOverheadBytes = 2048;

    /// <summary>
    /// The most bytes a batch's message can take: a bytes payload as base64 (4 bytes for 3), a text payload with every byte escaped as
    /// JSON's \uXXXX (6), plus each row's fields. An upper bound, so that a batch it admits never meets the limit.
    /// </summary>
    public static long MostMessageBytes(int batchSize, PayloadShape payload)
    {
        var perPayload = payload.Kind == PayloadKind.Text ? 6L * payload.Bytes : (payload.Bytes + 2L) / 3 * 4;
        return batchSize * (perPayload + RowOverheadBytes);
    }

    public static void Check(string transport, int batchSize, PayloadShape payload, long batchBytes, (long Bytes, string Property)? messageLimit)
    {
        static string N(long n) => n.ToString("N0", CultureInfo.InvariantCulture);
        if (batchBytes < 1)
            throw new IntegrationException(ErrorCodes.InvalidParameter, $"BatchBytes must be at least 1 (was {batchBytes}).");
        var payloadBytes = (long)batchSize * payload.Bytes;
        if (batchSize > 1 && payloadBytes > batchBytes)
            throw new IntegrationException(ErrorCodes.InvalidParameter,
                $"A batch of {N(batchSize)} records with {payload} holds {N(payloadBytes)} bytes of payload, over BatchBytes ({N(batchBytes)}): " +
                $"use -p:BatchSize={EffectiveBatchSize(batchSize, payload.Bytes, batchBytes).ToString(CultureInfo.InvariantCulture)} (RunAll does) or raise -p:BatchBytes.");
        // Rows without a payload are the series' few hundred bytes, bounded by the servers' MaxBatchRecords already.
        if (payload.Bytes > 0 && messageLimit is { } limit && MostMessageBytes(batchSize, payload) > limit.Bytes)
            throw new IntegrationException(ErrorCodes.InvalidParameter,
                $"{transport}: a batch of {N(batchSize)} records with {payload} can make a message of up to {N(MostMessageBytes(batchSize, payload))} bytes, " +
                $"over {limit.Property} ({N(limit.Bytes)}), the most the transport carries: raise -p:{limit.Property}, or lower -p:BatchSize (-p:BatchBytes in RunAll).");
    }

    /// <summary>At most <paramref name="batchSize"/> records and at most <paramref name="batchBytes"/> of payload a batch, and never less than one record.</summary>
    public static int EffectiveBatchSize(int batchSize, int payloadBytes, long batchBytes) =>
        payloadBytes == 0 ? batchSize : (int)Math.Clamp(batchBytes / payloadBytes, 1, batchSize);
}
