using StackExchange.Redis;

namespace IntegrationTasks.Queues.Redis;

/// <summary>What the Redis Streams client and server share: their connections, a coded connect, a lost connection as IT3006.</summary>
internal static class RedisConnections
{
    /// <summary>How long a blocking read waits on the server before it asks again (below the connection's command timeout).</summary>
    public static readonly TimeSpan BlockFor = TimeSpan.FromSeconds(1);

    /// <summary>What redis-server answers a connection over its maxclients before closing it.</summary>
    private const string MaxClientsRefusal = "max number of clients reached";

    /// <summary>
    /// A connection to <paramref name="endpoint"/> (host:port). The library reconnects by itself; a server keeps that (a restarted
    /// Redis is served again), a client's transfer fails at the first break instead and its resume loop asks again on new
    /// connections. Commands time out after 10 s, far above a batch's milliseconds and the 1 s a blocking read waits.
    /// </summary>
    public static async Task<ConnectionMultiplexer> ConnectAsync(string endpoint, string name, BrokerCredentials? credentials, CancellationToken cancellationToken) =>
        await ConnectAsync(endpoint, name, credentials, null, cancellationToken).ConfigureAwait(false);

    /// <summary>As above, over TLS when <paramref name="tls"/> is given: the server's certificate must chain to its authority and name the endpoint's host.</summary>
    public static async Task<ConnectionMultiplexer> ConnectAsync(string endpoint, string name, BrokerCredentials? credentials, BrokerClientTls? tls,
        CancellationToken cancellationToken)
    {
        var options = new ConfigurationOptions
        {
            EndPoints = { CheckedEndpoint(endpoint) }, ClientName = name, AbortOnConnectFail = true, ConnectTimeout = 10_000, AsyncTimeout = 10_000,
            SyncTimeout = 10_000, KeepAlive = 5, ConnectRetry = 1, User = credentials?.UserName, Password = credentials?.Password,
        };
        if (tls is not null)
        {
            options.Ssl = true;
            options.SslHost = HostAndPort(endpoint).Host;
            options.SslProtocols = Hosting.TlsCertificates.Protocols;
            options.CertificateValidation += tls.Trusts;
            if (tls.Certificate is { } mine)
                options.CertificateSelection += (_, _, _, _, _) => mine;
        }
        try
        {
            return await ConnectionMultiplexer.ConnectAsync(options).WaitAsync(cancellationToken).ConfigureAwait(false);
        }
        catch (RedisConnectionException e) when (tls is not null && Streams.TlsConnector.HandshakeRefusal(e) is { } refused)
        {
            throw new IntegrationException(ErrorCodes.TlsRefused, $"TLS with Redis at {endpoint} failed: {refused.Message}", e);
        }
        catch (RedisConnectionException e)
        {
            // The library says only that it could not connect; the server says why to whoever asks.
            // Asked in plaintext, so not of a TLS listener (it would not answer); without logging in, so a server that takes only its user
            // answers NOAUTH whatever went wrong: that says "refused" only to a client that has no credentials to offer.
            var refusal = tls is null ? await RefusalAsync(endpoint, cancellationToken).ConfigureAwait(false) : null;
            if (e.FailureType == ConnectionFailureType.AuthenticationFailure
                || credentials is null && refusal is not null && refusal.StartsWith("-NOAUTH", StringComparison.Ordinal))
                throw new IntegrationException(ErrorCodes.CredentialsRefused, credentials is null
                    ? $"Redis at {endpoint} takes only its user, and this client has no credentials (CredentialsFile; BrokerCredentials=true)."
                    : $"Redis at {endpoint} refused {credentials}: wrong user or password.", e);
            if (refusal is not null && refusal.Contains(MaxClientsRefusal, StringComparison.OrdinalIgnoreCase))
                throw new IntegrationException(ErrorCodes.ServerBusy,
                    $"Redis at {endpoint} refused the connection: its connection limit is reached ({refusal}); raise RedisMaxClients or run fewer clients.", e);
            if (tls is not null && await tls.MissingCertificateAsync("Redis", HostAndPort(endpoint).Host, HostAndPort(endpoint).Port, e, cancellationToken, causeHidden: true).ConfigureAwait(false) is { } missing)
                throw missing;
            throw new IntegrationException(ErrorCodes.BrokerUnavailable, refusal is not null && refusal.StartsWith('-')
                ? $"Redis at {endpoint} refused the connection: {refusal.TrimStart('-')}"
                : $"Redis at {endpoint} did not accept a connection: {e.Message}", e);
        }
    }

    /// <summary>What the server answers a PING on a connection of its own (its refusal, when it refuses), within 2 s; null when it cannot be asked.</summary>
    private static async Task<string?> RefusalAsync(string endpoint, CancellationToken cancellationToken)
    {
        var (host, port) = HostAndPort(endpoint);
        using var timeout = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        timeout.CancelAfter(TimeSpan.FromSeconds(2));
        try
        {
            using var socket = new System.Net.Sockets.TcpClient();
            await socket.ConnectAsync(host, port, timeout.Token).ConfigureAwait(false);
            var stream = socket.GetStream();
            await stream.WriteAsync("PING\r\n"u8.ToArray(), timeout.Token).ConfigureAwait(false);
            using var reader = new StreamReader(stream, System.Text.Encoding.ASCII);
            return await reader.ReadLineAsync(timeout.Token).ConfigureAwait(false);
        }
        catch (Exception e) when (e is IOException or System.Net.Sockets.SocketException or OperationCanceledException)
        {
            return null;
        }
    }

    /// <summary>
    /// The server as given (host:port), refused with IT1001 when it is not one: the library would take a bare name as a host on its
    /// default port 6379, another server than the one meant.
    /// </summary>
    public static string CheckedEndpoint(string endpoint)
    {
        _ = HostAndPort(endpoint);
        return endpoint;
    }

    private static (string Host, int Port) HostAndPort(string endpoint)
    {
        var colon = endpoint.LastIndexOf(':');
        if (colon <= 0 || !int.TryParse(endpoint.AsSpan(colon + 1), System.Globalization.NumberStyles.None, System.Globalization.CultureInfo.InvariantCulture, out var port)
            || port is < 1 or > 65535 || endpoint[..colon].Trim('[', ']').Length == 0 || endpoint.Contains("//", StringComparison.Ordinal))
            throw new IntegrationException(ErrorCodes.InvalidParameter, $"RedisEndpoint '{endpoint}' is not a Redis server's host:port.");
        return (endpoint[..colon].Trim('[', ']'), port);
    }

    /// <summary>Redis gone, slow to answer, or loading its file again after a restart: what a server waits out.</summary>
    public static bool IsOutage(Exception e) =>
        e is RedisConnectionException or RedisTimeoutException || (e is RedisServerException && e.Message.StartsWith("LOADING", StringComparison.Ordinal));

    /// <summary>Redis refusing a write at its maxmemory (RedisMaxMemoryBytes, noeviction): nothing was dropped, nothing more is taken.</summary>
    public static bool IsFull(Exception e) => e is RedisServerException && e.Message.StartsWith("OOM", StringComparison.Ordinal);

    /// <summary>A write Redis refused at its maxmemory, as the suite's coded error (IT3008).</summary>
    public static IntegrationException Full(string endpoint, Exception e) =>
        new(ErrorCodes.ServerBusy, $"Redis at {endpoint} is at its memory limit (maxmemory, RedisMaxMemoryBytes) and refuses writes: {e.Message}", e);

    /// <summary>
    /// Runs <paramref name="work"/> until it ends or a connection breaks, whichever is first: a break cancels the work and fails with
    /// IT3006 (the resume loop then asks again, on new connections, for what is not committed).
    /// </summary>
    public static async Task RunUntilLostAsync(IReadOnlyList<ConnectionMultiplexer> connections, string endpoint, CancellationTokenSource cancellation,
        Func<Task> work)
    {
        var lost = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        void OnFailed(object? sender, ConnectionFailedEventArgs args) =>
            lost.TrySetException(new IntegrationException(ErrorCodes.ConnectionLost, $"The connection to Redis at {endpoint} was lost ({args.FailureType}): {args.Exception?.Message}"));
        foreach (var connection in connections)
            connection.ConnectionFailed += OnFailed;
        try
        {
            await TaskGroup.RunUntilBrokenAsync(lost.Task, cancellation, work).ConfigureAwait(false);
        }
        catch (Exception e) when (IsOutage(e))
        {
            // A break, or Redis still loading its file after a restart: the resume loop asks again on new connections.
            throw new IntegrationException(ErrorCodes.ConnectionLost, $"The connection to Redis at {endpoint} failed: {e.Message}", e);
        }
        catch (Exception e) when (IsFull(e))
        {
            throw Full(endpoint, e);
        }
        finally
        {
            foreach (var connection in connections)
                connection.ConnectionFailed -= OnFailed;
        }
    }
}
