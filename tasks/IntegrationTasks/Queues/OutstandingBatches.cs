using System.Globalization;
using IntegrationTasks.Transfer;
using IntegrationTasks.Wire;

namespace IntegrationTasks.Queues;

/// <summary>
/// The batches a durable queue client (JetStream, Redis Streams) asked for in one attempt and has not imported: at most
/// MaxInFlight unanswered (a request waits for its turn), an answer imported once and acknowledged only after its commit (a repeat
/// is only acknowledged), and done once every batch is in. Answers carry their request's id — the run, the client, the batch — so
/// that answers to an earlier run are told apart and left.
/// </summary>
internal sealed class OutstandingBatches(IReadOnlyList<int> pending, int maxInFlight, string runId, int client, int totalBatches, string replies)
    : IDisposable
{
    private readonly HashSet<int> _outstanding = [.. pending];
    private readonly HashSet<int> _sent = [];
    private readonly SemaphoreSlim _inFlight = new(maxInFlight);
    private readonly string _requestIdPrefix = $"{runId}.{client.ToString(CultureInfo.InvariantCulture)}.";

    public Task WaitToSendAsync(CancellationToken cancellationToken) => _inFlight.WaitAsync(cancellationToken);

    /// <summary>Some request is sent and not yet answered.</summary>
    public bool AnyInFlight => _inFlight.CurrentCount < maxInFlight;

    /// <summary>
    /// Each pending batch's request, written once it may be sent (at most MaxInFlight unanswered, then its turn on the schedule) and
    /// handed to <paramref name="send"/> with its batch; the request's bytes are valid until <paramref name="send"/> returns.
    /// </summary>
    public async Task SendEachAsync(BatchPlan plan, CommittedBatches committed, Func<int, ReadOnlyMemory<byte>, Task> send, CancellationToken cancellationToken)
    {
        using var buffer = new PooledBufferStream();
        foreach (var batch in pending)
        {
            await WaitToSendAsync(cancellationToken).ConfigureAwait(false);
            buffer.Reset();
            RecordXml.WriteRequest(buffer, plan.Ids(batch));
            await committed.Latency.SendTurnAsync(batch, cancellationToken).ConfigureAwait(false);
            await send(batch, buffer.WrittenMemory).ConfigureAwait(false);
            lock (_outstanding)
                _sent.Add(batch);
        }
    }

    /// <summary>The batches sent and not yet answered, in batch order.</summary>
    public List<int> Unanswered()
    {
        lock (_outstanding)
            return [.. _sent.Where(_outstanding.Contains).Order()];
    }

    /// <summary>A batch's request again (an at-least-once client asking once more after a silence), handed to <paramref name="send"/>.</summary>
    public async Task SendAgainAsync(BatchPlan plan, int batch, Func<int, ReadOnlyMemory<byte>, Task> send)
    {
        using var buffer = new PooledBufferStream();
        RecordXml.WriteRequest(buffer, plan.Ids(batch));
        await send(batch, buffer.WrittenMemory).ConfigureAwait(false);
    }

    public string RequestId(int batch) => _requestIdPrefix + batch.ToString(CultureInfo.InvariantCulture);

    /// <summary>The batch a reply answers; null when it answers another run (to be acknowledged and left).</summary>
    public int? BatchOf(string requestId) =>
        !requestId.StartsWith(_requestIdPrefix, StringComparison.Ordinal) ? null
        : int.TryParse(requestId.AsSpan(_requestIdPrefix.Length), NumberStyles.None, CultureInfo.InvariantCulture, out var batch) && batch < totalBatches
            ? batch
            : throw new IntegrationException(ErrorCodes.TransferFailed, $"A reply on {replies} names no batch of this transfer ('{requestId}').");

    /// <summary>
    /// Imports the answer to <paramref name="batch"/> unless it came before, then acknowledges it — only after the commit: a client
    /// killed before that is given the answer again, and imports nothing twice. True once every batch is in.
    /// </summary>
    public async Task<bool> TakeAsync(int batch, ReadOnlyMemory<byte> body, BatchImporter importer, CommittedBatches committed, Func<Task> acknowledge,
        CancellationToken cancellationToken)
    {
        bool answeredBefore;
        lock (_outstanding)
            answeredBefore = !_outstanding.Contains(batch);
        if (!answeredBefore)
        {
            committed.Latency.Received(batch);
            using (var stream = MemoryStreams.ReadOnly(body))
                await importer.ImportAsync(stream, cancellationToken).ConfigureAwait(false);
            committed.Add(batch);
        }
        await acknowledge().ConfigureAwait(false);
        if (answeredBefore)
            return false;
        bool finished;
        lock (_outstanding)
        {
            _outstanding.Remove(batch);
            finished = _outstanding.Count == 0;
        }
        _inFlight.Release();
        return finished;
    }

    public void Dispose() => _inFlight.Dispose();
}
