namespace IntegrationTasks.Abstractions;

/// <summary>
/// A transport's server, run by the suite in a process of its own until the suite (or Ctrl+C) stops it: bound once
/// (<see cref="BindAsync"/>), its listener run until stopped, then the listener and the server disposed, in that order.
/// </summary>
public abstract class TransportServer : IAsyncDisposable
{
    /// <summary>
    /// Binds (a port taken fails here: <see cref="TransportError.PortInUse"/>) and returns the bound listener; the suite says the
    /// server is ready once this returns, then runs it.
    /// </summary>
    public abstract Task<TransportListener> BindAsync(ServerSession session, CancellationToken cancellationToken);

    /// <summary>Releases what the server holds beyond its listener; called once the listener is disposed, or when binding failed.</summary>
    public virtual ValueTask DisposeAsync()
    {
        GC.SuppressFinalize(this);
        return ValueTask.CompletedTask;
    }
}

/// <summary>A server bound and ready to serve (in the manner of Kestrel's bound listeners).</summary>
public abstract class TransportListener : IAsyncDisposable
{
    /// <summary>
    /// Serves until the token is cancelled (the suite's stop, Ctrl+C), then returns once the clients being served are done with. A
    /// client's bad request gets a coded answer or a closed connection, never the end of the server for the others.
    /// </summary>
    public abstract Task RunAsync(CancellationToken cancellationToken);

    /// <summary>Frees what it bound (its port); called after <see cref="RunAsync"/> returns, whatever its outcome.</summary>
    public virtual ValueTask DisposeAsync()
    {
        GC.SuppressFinalize(this);
        return ValueTask.CompletedTask;
    }
}

/// <summary>What the suite gives a server: where to listen, and ServiceTable's records read the same way for every transport.</summary>
public abstract class ServerSession
{
    /// <summary>The address to bind (the suite's BindAddress: loopback unless the run spans machines).</summary>
    public abstract string BindAddress { get; }

    /// <summary>The port to bind (the item's Port); 0 for a <see cref="TransportServerKind.NoPort"/> transport.</summary>
    public abstract int Port { get; }

    /// <summary>A setting's value from the transport's item, or its default (one of <see cref="Transport.Settings"/>).</summary>
    public abstract T ValueOf<T>(TransportSetting<T> setting) where T : IParsable<T>;

    /// <summary>The most records one request may ask for (the suite's MaxBatchRecords): refuse more with <see cref="TransportError.BatchTooLarge"/>.</summary>
    public abstract int MaxBatchRecords { get; }

    /// <summary>The largest message the server should accept, in bytes (the suite's MaxFrameBytes).</summary>
    public abstract int MaxFrameBytes { get; }

    /// <summary>Where the server says what it does (its process's log).</summary>
    public abstract ITransportLog Log { get; }

    /// <summary>
    /// A reader of ServiceTable on a database connection of its own, doing the server's work as every transport's server does it
    /// (ServerWork: one SELECT per ID, or one range query per batch). Open one per connection or per worker and dispose it with it;
    /// one reader answers one request at a time.
    /// </summary>
    public abstract Task<IServiceTableReader> OpenReaderAsync(CancellationToken cancellationToken);
}

/// <summary>ServiceTable as a server reads it for its clients.</summary>
public interface IServiceTableReader : IAsyncDisposable
{
    /// <summary>The batch's records in ID order; an ID ServiceTable does not have is left out.</summary>
    IAsyncEnumerable<ServiceRecord> ReadAsync(RequestedBatch batch, CancellationToken cancellationToken);
}

/// <summary>Where a transport's client or server says what it does; lines go to the build's log.</summary>
public interface ITransportLog
{
    /// <summary>A line shown at the build's normal verbosity.</summary>
    void Info(string message);

    /// <summary>A line shown only at detailed verbosity.</summary>
    void Detail(string message);

    /// <summary>A coded warning (IT…, the error's code).</summary>
    void Warning(TransportError error, string message);
}
