namespace IntegrationTasks.Transfer;

/// <summary>What a transport reports of one run; records and time are measured around it by the client task.</summary>
public sealed record TransferResult(long BytesSent, long BytesReceived);
