namespace IntegrationTasks.Abstractions;

/// <summary>
/// A transport's client: asks its server for the session's batches and hands each one's records to
/// <see cref="ClientSession.WriteAsync"/>, which commits it in ClientTable. The suite times the transfer around it, verifies every row
/// afterwards, and runs it as many clients, under faults and with resumption as the transport's capabilities say.
/// </summary>
public abstract class TransportClient : IAsyncDisposable
{
    /// <summary>
    /// One attempt at <see cref="ClientSession.Batches"/>: returns once each is written. Throw a <see cref="TransportException"/> for
    /// what went wrong (a lost connection is <see cref="TransportError.ConnectionLost"/>: the suite resumes if the transport
    /// <see cref="TransportCapabilities.Resumes"/>); cancellation is the run's timeout or the build's.
    /// </summary>
    public abstract Task TransferAsync(ClientSession session, CancellationToken cancellationToken);

    /// <summary>Closes what the client opened; called after each attempt, whatever its outcome.</summary>
    public virtual ValueTask DisposeAsync()
    {
        GC.SuppressFinalize(this);
        return ValueTask.CompletedTask;
    }
}

/// <summary>One batch a client asks for: the <see cref="Count"/> records from <see cref="FirstId"/> (IDs are consecutive).</summary>
/// <param name="Index">The batch's place in this client's share (what <see cref="ClientSession.Sent"/> and the suite's bookkeeping take).</param>
public readonly record struct RequestedBatch(int Index, int FirstId, int Count)
{
    /// <summary>The last ID of the batch.</summary>
    public int LastId => FirstId + Count - 1;

    /// <summary>Whether an ID belongs to this batch.</summary>
    public bool Contains(int id) => id >= FirstId && id <= LastId;
}

/// <summary>What the suite gives a client for one attempt: where the server is, which batches to ask for, and where their records go.</summary>
public abstract class ClientSession
{
    /// <summary>The server's host name or address (the suite's HostName; a relay's when one stands in front).</summary>
    public abstract string Host { get; }

    /// <summary>The server's port (the item's Port, or the relay's); 0 for a <see cref="TransportServerKind.NoPort"/> transport.</summary>
    public abstract int Port { get; }

    /// <summary>A setting's value from the transport's item, or its default (one of <see cref="Transport.Settings"/>).</summary>
    public abstract T ValueOf<T>(TransportSetting<T> setting) where T : IParsable<T>;

    /// <summary>The batches this attempt is to ask for, in order: the client's share, or after a broken connection those not yet committed.</summary>
    public abstract IReadOnlyList<RequestedBatch> Batches { get; }

    /// <summary>At most this many batches asked for and not yet written at once (the suite's MaxInFlight), for a transport that pipelines.</summary>
    public abstract int MaxInFlight { get; }

    /// <summary>The largest message the transport should accept, in bytes (the suite's MaxFrameBytes).</summary>
    public abstract int MaxFrameBytes { get; }

    /// <summary>Which of the run's clients this is (0 for the first or only one).</summary>
    public abstract int ClientIndex { get; }

    /// <summary>Where the client says what it does (the build's log).</summary>
    public abstract ITransportLog Log { get; }

    /// <summary>
    /// A TCP connection to the server (<see cref="Host"/>, <see cref="Port"/>), for a transport whose protocol runs over one: the suite
    /// counts every byte through it for the report's bytes columns and marks the session connected, so <see cref="Connected"/> and
    /// <see cref="CountBytes"/> are not called for it. Dispose it when done; the suite closes it when the attempt ends in any case.
    /// A server that cannot be reached is <see cref="TransportError.ConnectionFailed"/>; a <see cref="TransportServerKind.NoPort"/>
    /// transport has none (<see cref="TransportError.InvalidSetting"/>).
    /// </summary>
    public abstract Task<Stream> ConnectAsync(CancellationToken cancellationToken);

    /// <summary>
    /// For a connection the transport opens itself (not through <see cref="ConnectAsync"/>): call once the server is reached; from
    /// then on a failure is a broken connection, not "no server", and set-up time ends.
    /// </summary>
    public abstract void Connected();

    /// <summary>Call when a batch's request has gone: its latency (request to commit) counts from here.</summary>
    public abstract void Sent(RequestedBatch batch);

    /// <summary>
    /// For a connection the transport opens itself (not through <see cref="ConnectAsync"/>): adds the bytes it put on and took off the
    /// wire. A transport that neither connects through the suite nor counts is reported with its bytes "not measured" (and told so).
    /// </summary>
    public abstract void CountBytes(long sent, long received);

    /// <summary>
    /// Writes one batch's records into ClientTable in one transaction and marks the batch committed; safe to call from several
    /// tasks at once. Records must be the batch's (IDs outside it are refused with <see cref="TransportError.MalformedMessage"/>);
    /// one the server did not have is left out, and verification names it.
    /// </summary>
    public abstract ValueTask WriteAsync(RequestedBatch batch, IReadOnlyList<ServiceRecord> records, CancellationToken cancellationToken);
}
