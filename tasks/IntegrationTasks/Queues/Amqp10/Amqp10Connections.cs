using System.Security.Authentication;
using Amqp;

namespace IntegrationTasks.Queues.Amqp10;

/// <summary>
/// An AMQP 1.0 connection to the suite's RabbitMQ (its bundled AMQP 1.0 plugin, on the same port as AMQP 0-9-1): SASL PLAIN as the
/// broker's user (or guest on loopback), TLS with the broker's certificate chained to the suite's authority alone, an idle timeout
/// of 10 s (the peer sends frames at least every 5 s), so that a silent peer is noticed in tens of seconds; a refusal is a coded error.
/// </summary>
internal static class Amqp10Connections
{
    public static async Task<Connection> ConnectAsync(BrokerOptions broker, string containerId, CancellationToken cancellationToken)
    {
        var factory = new ConnectionFactory();
        factory.AMQP.ContainerId = containerId;
        factory.AMQP.IdleTimeout = 10_000;
        factory.AMQP.MaxFrameSize = 1024 * 1024;
        if (broker.ClientTls is { } tls)
        {
            factory.SSL.Protocols = SslProtocols.Tls12 | SslProtocols.Tls13;
            factory.SSL.RemoteCertificateValidationCallback = tls.Trusts;
            if (tls.Certificate is { } mine)
                factory.SSL.ClientCertificates.Add(mine);
        }
        var address = new Address(broker.HostName, broker.Port, broker.UserName, broker.Password, "/", broker.ClientTls is null ? "AMQP" : "AMQPS");
        try
        {
            // The library's own connect ends at the token: nothing is left connecting behind a timeout.
            using var connecting = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
            connecting.CancelAfter(TimeSpan.FromSeconds(15));
            return await factory.CreateAsync(address, connecting.Token).ConfigureAwait(false);
        }
        catch (Exception e) when (broker.ClientTls is not null && Streams.TlsConnector.HandshakeRefusal(e) is { } refused)
        {
            throw new IntegrationException(ErrorCodes.TlsRefused, $"TLS with RabbitMQ's AMQP 1.0 at {broker.HostName}:{broker.Port} failed: {refused.Message}", e);
        }
        catch (AmqpException e) when (e.Error?.Condition?.ToString() == ErrorCode.UnauthorizedAccess)
        {
            throw new IntegrationException(ErrorCodes.CredentialsRefused, broker.UserName == "guest"
                ? $"RabbitMQ at {broker.HostName}:{broker.Port} refused guest, which it takes only from loopback; this client needs the broker's credentials (CredentialsFile; BrokerCredentials=true)."
                : $"RabbitMQ at {broker.HostName}:{broker.Port} refused user {broker.UserName}: wrong user or password.", e);
        }
        catch (Exception e) when (e is AmqpException or System.Net.Sockets.SocketException or IOException or TimeoutException or ObjectDisposedException
                                      or OperationCanceledException && !cancellationToken.IsCancellationRequested)
        {
            if (broker.ClientTls is not null
                && await broker.ClientTls.MissingCertificateAsync("RabbitMQ", broker.HostName, broker.Port, e, cancellationToken).ConfigureAwait(false) is { } missing)
                throw missing;
            throw new IntegrationException(ErrorCodes.BrokerUnavailable,
                $"Cannot open an AMQP 1.0 connection to RabbitMQ at {broker.HostName}:{broker.Port}: {e.Message}. The suite's broker enables its AMQP 1.0 plugin; "
                + "a broker of one's own needs it: rabbitmq-plugins enable rabbitmq_amqp1_0.", e);
        }
    }

    /// <summary>
    /// A task that fails with IT3006 when the connection closes (a broker stopped, a connection cut, a link refused): what a client
    /// or server waits on beside its work.
    /// </summary>
    public static Task Lost(Connection connection, BrokerOptions broker)
    {
        var lost = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        connection.AddClosedCallback((_, error) => lost.TrySetException(new IntegrationException(ErrorCodes.ConnectionLost,
            $"The AMQP 1.0 connection to RabbitMQ at {broker.HostName}:{broker.Port} closed{(error is null ? "" : $": {error.Condition} {error.Description}")}")));
        if (connection.IsClosed)
            lost.TrySetException(new IntegrationException(ErrorCodes.ConnectionLost, $"The AMQP 1.0 connection to RabbitMQ at {broker.HostName}:{broker.Port} closed."));
        // The close that ends a finished transfer fails it too, with nobody waiting: observed here.
        _ = lost.Task.ContinueWith(t => _ = t.Exception, CancellationToken.None, TaskContinuationOptions.OnlyOnFaulted, TaskScheduler.Default);
        return lost.Task;
    }

    /// <summary>Closes without waiting long for a broker that may be gone.</summary>
    public static async Task CloseQuietlyAsync(Connection connection)
    {
        try
        {
            if (!connection.IsClosed)
                await connection.CloseAsync(TimeSpan.FromSeconds(2), null).ConfigureAwait(false);
        }
        catch (Exception e) when (e is AmqpException or TimeoutException or ObjectDisposedException or IOException or System.Net.Sockets.SocketException)
        {
            // Already broken: nothing left to close cleanly.
        }
    }
}
