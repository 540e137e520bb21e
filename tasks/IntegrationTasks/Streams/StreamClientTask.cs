using IntegrationTasks.Transfer;
using IntegrationTasks.Wire;

namespace IntegrationTasks.Streams;

/// <summary>
/// A client of a stream server, whatever carries the stream (TCP, a Unix socket, a WebSocket): open a connection with the
/// transport's connector, then let its model move the batches over frames; a resuming transport reconnects after a break and
/// asks only for the batches not yet committed. A transport says its connector, frame format, socket I/O and model; nothing else.
/// </summary>
public abstract class StreamClientTask : TransferClientTask
{
    public int MaxFrameBytes { get; set; } = SettingDefaults.MaxFrameBytes;

    protected override (long Bytes, string Property)? MessageLimit => (MaxFrameBytes, nameof(MaxFrameBytes));

    protected virtual FrameFormat Format => FrameFormat.Plain;
    protected virtual StreamIo Io => StreamIo.Streams;

    /// <summary>The server target this client talks to, named in the error when nothing listens.</summary>
    protected abstract string ServerTarget { get; }

    protected abstract ClientModel CreateModel();

    /// <summary>How this transport opens its connection (checked before the first batch: a bad setting fails before any work).</summary>
    protected abstract IStreamConnector CreateConnector();

    /// <summary>Each client its own connection, model and resume loop: nothing of a transfer is kept on the task.</summary>
    protected override bool ServesManyClients => true;

    /// <summary>Every model waits for its turn before writing a request (open loop with -p:Rate).</summary>
    protected override bool SendsOnSchedule => true;

    /// <summary>Whether a broken connection is resumed: reconnect and ask only for the batches not yet committed (the pipelined models).</summary>
    protected virtual bool Resumes => false;

    protected override async Task<TransferResult> TransferAsync(BatchPlan plan, BatchImporter importer, CancellationToken cancellationToken)
    {
        var model = CreateModel();
        var connector = CreateConnector();
        using var ownedByConnector = connector as IDisposable; // what its connections share (a WebSocket's TLS handler)
        var resumption = Resumption(plan, Resumes);
        long written = 0, read = 0;
        await resumption.RunAsync(async (missing, token) =>
        {
            FrameConnection? frames = null;
            try
            {
                await using var connection = await connector.ConnectAsync(ServerTarget, token).ConfigureAwait(false);
                resumption.MarkConnected();
                await using (frames = FrameConnection.Create(Io, connection.Stream, Format, MaxFrameBytes))
                {
                    importer.MarkSetupDone();
                    await model.RunAsync(frames, plan, missing, resumption.Committed, importer, token).ConfigureAwait(false);
                }
            }
            finally
            {
                written += frames?.BytesWritten ?? 0;
                read += frames?.BytesRead ?? 0;
            }
        }, cancellationToken, IsBreak).ConfigureAwait(false);
        return new TransferResult(written, read);
    }

    /// <summary>What a resuming client reconnects after: the connection broke or was cut mid-frame; on a retry, the server not (yet) back.</summary>
    private static bool IsBreak(Exception e) => StreamConnections.IsDisconnect(e)
        || e is IntegrationException { Code: ErrorCodes.ConnectionLost or ErrorCodes.TruncatedFrame or ErrorCodes.ConnectionFailed }
        || e is TransferEndedEarlyException;
}
