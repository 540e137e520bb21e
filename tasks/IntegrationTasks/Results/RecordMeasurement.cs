using IntegrationTasks.Common;
using Microsoft.Build.Framework;

namespace IntegrationTasks.Results;

/// <summary>Appends one verified repetition to the results log, with the server's peak memory since the last one.</summary>
public sealed class RecordMeasurement : IntegrationTask
{
    [Required] public string ResultsFile { get; set; } = "";
    [Required] public string Transport { get; set; } = "";
    public string Provider { get; set; } = "";
    [Required] public int Records { get; set; }
    public int BatchSize { get; set; }
    public int Repetition { get; set; }
    [Required] public double ElapsedSeconds { get; set; }
    public double FirstCommitSeconds { get; set; }
    public long BytesSent { get; set; }
    public long BytesReceived { get; set; }
    public long ClientPeakBytes { get; set; }

    /// <summary>The server's process, when there is one: its peak is read, then reset for the next repetition.</summary>
    public int ServerProcessId { get; set; }

    public int TotalRepetitions { get; set; }

    protected override Task ExecuteAsync(CancellationToken cancellationToken)
    {
        long? serverPeak = null;
        if (ServerProcessId > 0)
        {
            serverPeak = ProcessMemory.PeakBytes(ServerProcessId);
            ProcessMemory.ResetPeak(ServerProcessId);
        }
        var measurement = new Measurement
        {
            Transport = Transport, Provider = Provider, Records = Records, BatchSize = BatchSize, Repetition = Repetition,
            ElapsedSeconds = ElapsedSeconds, FirstCommitSeconds = FirstCommitSeconds, BytesSent = BytesSent,
            BytesReceived = BytesReceived, ClientPeakBytes = ClientPeakBytes, ServerPeakBytes = serverPeak, Verified = true,
        };
        MeasurementLog.Append(ResultsFile, measurement);
        Log.LogMessage(MessageImportance.High, "{0} {1:N0} records, repetition {2}{3}: {4:F3} s, {5:N0} records/s, verified.",
            Transport, Records, Repetition, TotalRepetitions > 0 ? $" of {TotalRepetitions}" : "",
            ElapsedSeconds, measurement.RecordsPerSecond);
        return Task.CompletedTask;
    }
}
