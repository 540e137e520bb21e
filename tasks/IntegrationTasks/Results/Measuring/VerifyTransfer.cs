using IntegrationTasks.Data;
using IntegrationTasks.Transfer;

namespace IntegrationTasks.Results;

/// <summary>
/// Fails the build (IT3001) unless ClientTable equals ServiceTable for IDs 1..Records, row for row. What it found goes to a file of
/// its own beside the client's (<see cref="RunVerification"/>), which RecordMeasurement reads: the client's file is only read here.
/// </summary>
public sealed class VerifyTransfer : IntegrationTask
{
    public string ServerProvider { get; set; } = "Sqlite";

    [Required]
    public string ServerConnString { get; set; } = "";

    public string ClientProvider { get; set; } = "Sqlite";

    [Required]
    public string ClientConnString { get; set; } = "";

    [Required]
    public int Records { get; set; }

    [Output] public int Matched { get; private set; }

    /// <summary>The client run's figures (its ResultFile): when they say the transfer failed under an injected fault, ClientTable
    /// must hold whole batches of <see cref="BatchSize"/> only, none twice, instead of every row.</summary>
    public string? RunFile { get; set; }

    public int BatchSize { get; set; }

    protected override async Task ExecuteAsync(CancellationToken cancellationToken)
    {
        if (Records < 1)
            throw new IntegrationException(ErrorCodes.InvalidParameter, $"Records must be at least 1 (was {Records}).");
        var verifier = new TransferVerifier(
            Database.Create(ServerProvider, ServerConnString), Database.Create(ClientProvider, ClientConnString));
        var run = !string.IsNullOrEmpty(RunFile) && File.Exists(RunFile) ? MeasurementLog.ReadSingle(RunFile) : null;
        if (run is { FailedWith: { } code })
        {
            if (BatchSize < 1)
                throw new IntegrationException(ErrorCodes.InvalidParameter, $"BatchSize must be at least 1 to check a failed transfer's batches (was {BatchSize}).");
            var batches = await verifier.VerifyWholeBatchesAsync(Records, BatchSize, cancellationToken).ConfigureAwait(false);
            Matched = batches.Matched;
            RunVerification.Write(RunFile!, new RunVerification(batches.Matched, batches.Duplicated, batches.PayloadBytes, batches.TextPayload));
            Log.LogMessage(MessageImportance.High,
                "Checked after the failure ({0}): ClientTable holds {1} whole batches ({2:N0} rows equal to ServiceTable's), none partial, none twice.",
                code, batches.WholeBatches, batches.Matched);
            return;
        }
        var report = await verifier.VerifyAsync(Records, cancellationToken).ConfigureAwait(false);
        Matched = report.Matched;
        // The run's figures carry what the check found, for the fault table (rows lost, rows twice).
        if (run is not null)
            RunVerification.Write(RunFile!, new RunVerification(report.Matched, report.Duplicated, report.PayloadBytes, report.TextPayload));
        Log.LogMessage(RunDetail, "Verified: ClientTable equals ServiceTable for all {0:N0} IDs.", report.Matched);
    }
}

/// <summary>What verification found of one client run: written once by VerifyTransfer beside the run's file, read by RecordMeasurement.</summary>
/// <param name="PayloadBytes">The payload bytes of the rows found equal (null in files from before payloads), and whether they were text.</param>
public sealed record RunVerification(int RowsMatched, int RowsDuplicated, long? PayloadBytes = null, bool TextPayload = false)
{
    /// <summary>Each row's payload as found: every row of a data set carries the same size.</summary>
    public int? PayloadBytesPerRow => PayloadBytes is > 0 && RowsMatched > 0 ? (int)(PayloadBytes.Value / RowsMatched) : null;

    public string? PayloadKind => PayloadBytesPerRow is null ? null : TextPayload ? nameof(Data.PayloadKind.Text) : nameof(Data.PayloadKind.Bytes);

    public static string PathFor(string runFile) => runFile + ".verified.json";

    public static void Write(string runFile, RunVerification verification) => JsonFiles.Write(PathFor(runFile), verification);

    /// <summary>The verification of <paramref name="runFile"/>, or null when none was written (Verify=false).</summary>
    public static RunVerification? Read(string runFile) => File.Exists(PathFor(runFile)) ? JsonFiles.Read<RunVerification>(PathFor(runFile)) : null;

    /// <summary>The run's file and its verification, once recorded (or at the end of a run by hand).</summary>
    public static void Delete(string runFile)
    {
        File.Delete(runFile);
        File.Delete(PathFor(runFile));
    }
}
