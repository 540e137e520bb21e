using IntegrationTasks.Transfer;

namespace IntegrationTasks.Queues;

/// <summary>
/// What the queue clients share: each client its own connections (and reply subject or stream), requests sent on the
/// schedule (open loop with -p:Rate), and a broken connection resumed — a new one asks again for the batches not committed. A
/// transport with an idempotent import (a durable one) also skips, first, the batches already whole in ClientTable.
/// </summary>
public abstract class ResumingQueueClientTask : TransferClientTask
{
    protected override bool ServesManyClients => true;
    protected override bool SendsOnSchedule => true;

    /// <summary>Whether a broken connection is resumed; a transport that promises nothing across one fails cleanly instead.</summary>
    protected virtual bool Resumes => true;

    /// <summary>One connection's attempt at the batches not committed.</summary>
    protected abstract Task<TransferResult> AttemptAsync(BatchPlan plan, BatchImporter importer, IReadOnlyList<int> pending, ResumingTransfer resumption,
        CancellationToken cancellationToken);

    protected override async Task<TransferResult> TransferAsync(BatchPlan plan, BatchImporter importer, CancellationToken cancellationToken)
    {
        var resumption = Resumption(plan, resumes: Resumes);
        if (IdempotentImport)
            await SkipBatchesAlreadyImportedAsync(plan, resumption, cancellationToken).ConfigureAwait(false);
        long sent = 0, received = 0;
        await resumption.RunAsync(async (missing, token) =>
        {
            var result = await AttemptAsync(plan, importer, missing, resumption, token).ConfigureAwait(false);
            Interlocked.Add(ref sent, result.BytesSent);
            Interlocked.Add(ref received, result.BytesReceived);
        }, cancellationToken, e => e is IntegrationException { Code: ErrorCodes.ConnectionLost or ErrorCodes.BrokerUnavailable }).ConfigureAwait(false);
        return new TransferResult(sent, received);
    }
}
