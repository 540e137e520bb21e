using IntegrationTasks.Common;
using Microsoft.Build.Framework;

namespace IntegrationTasks.Data;

/// <summary>Fails the build (IT3001) unless ClientTable equals ServiceTable for IDs 1..Records, row for row.</summary>
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

    protected override async Task ExecuteAsync(CancellationToken cancellationToken)
    {
        if (Records < 1)
            throw new IntegrationException(ErrorCodes.InvalidParameter, $"Records must be at least 1 (was {Records}).");
        var verifier = new TransferVerifier(
            Database.Create(ServerProvider, ServerConnString), Database.Create(ClientProvider, ClientConnString));
        var report = await verifier.VerifyAsync(Records, cancellationToken).ConfigureAwait(false);
        Matched = report.Matched;
        Log.LogMessage(MessageImportance.High, "Verified: ClientTable equals ServiceTable for all {0:N0} IDs.", report.Matched);
    }
}
