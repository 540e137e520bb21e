namespace IntegrationTasks.Transfer;

/// <summary>What a transport reports of one run; records and time are measured around it by the client task.</summary>
public sealed record TransferResult(long BytesSent, long BytesReceived)
{
    /// <summary>For a transport whose library does not expose what it sent and received (the WCF client): the report shows "–", not 0.</summary>
    public static TransferResult BytesNotMeasured { get; } = new(0, 0) { BytesMeasured = false };

    public bool BytesMeasured { get; init; } = true;
}
