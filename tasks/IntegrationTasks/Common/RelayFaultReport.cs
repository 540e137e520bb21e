namespace IntegrationTasks.Common;

/// <summary>What a relay did about its fault: whether it landed, at which threshold, and how much the server had sent by the end.</summary>
public sealed record RelayFaultReport(string Fault, bool Injected, long FaultAfterBytes, long BytesFromServer, long BytesForwarded, double? InjectedAtSeconds)
{
    public static void Write(string path, RelayFaultReport report) => JsonFiles.Write(path, report);

    public static RelayFaultReport? Read(string path) => File.Exists(path) ? JsonFiles.Read<RelayFaultReport>(path) : null;
}
