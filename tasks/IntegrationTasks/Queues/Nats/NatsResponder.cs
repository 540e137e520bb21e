using IntegrationTasks.Data;
using NATS.Client.Core;

namespace IntegrationTasks.Queues.Nats;

/// <summary>
/// What the two NATS servers share: a connection that reconnects for as long as they run, the source's lookups, a serving loop
/// that runs until the server is stopped, and the requests answered and refused.
/// </summary>
public abstract class NatsResponder(RecordSource source, string url, string connectionName)
{
    public int MaxMessageBytes { get; init; } = NatsDefaults.NatsMaxPayloadBytes;
    public BrokerCredentials? Credentials { get; init; }

    /// <summary>Over TLS: the authority the server's certificate must chain to; null: plaintext.</summary>
    public BrokerClientTls? ClientTls { get; init; }

    private long _answered;
    private long _refused;

    public long Answered => Interlocked.Read(ref _answered);
    public long Refused => Interlocked.Read(ref _refused);

    protected void CountAnswered() => Interlocked.Increment(ref _answered);
    protected void CountRefused() => Interlocked.Increment(ref _refused);

    /// <summary>Subscribes and starts serving: the serving loop (ended by <paramref name="stopping"/>) and what to do before it is stopped.</summary>
    protected abstract Task<(Task Serving, Func<Task> BeforeStop)> ServeAsync(NatsConnection connection, RecordLookup lookup, CancellationToken stopping,
        CancellationToken cancellationToken);

    public async Task<Func<CancellationToken, Task>> StartAsync(CancellationToken cancellationToken)
    {
        var connection = new NatsConnection(NatsConnections.ServerOptions(url, connectionName, Credentials, ClientTls));
        try
        {
            await NatsConnections.ConnectAsync(connection, url, Credentials, cancellationToken, ClientTls).ConfigureAwait(false);
            var lookup = await source.OpenLookupAsync(cancellationToken).ConfigureAwait(false);
            var stopping = new CancellationTokenSource();
            var (serving, beforeStop) = await ServeAsync(connection, lookup, stopping.Token, cancellationToken).ConfigureAwait(false);
            return async stop =>
            {
                await stop.WhenCancelledAsync().ConfigureAwait(false);
                await beforeStop().ConfigureAwait(false);
                await stopping.CancelAsync().ConfigureAwait(false);
                await serving.ConfigureAwait(false);
                await lookup.DisposeAsync().ConfigureAwait(false);
                await connection.DisposeAsync().ConfigureAwait(false);
                stopping.Dispose();
            };
        }
        catch
        {
            await connection.DisposeAsync().ConfigureAwait(false);
            throw;
        }
    }
}
