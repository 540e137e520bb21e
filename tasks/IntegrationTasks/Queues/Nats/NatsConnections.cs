using NATS.Client.Core;

namespace IntegrationTasks.Queues.Nats;

/// <summary>What the NATS clients and servers share: their connection options, a coded connect, a message body as a stream.</summary>
internal static class NatsConnections
{
    /// <summary>
    /// A client's connection: its attempt ends at the first disconnection (<see cref="RunUntilLostAsync"/>) — the resume loop asks
    /// again on a new connection, and counts it; what the library would do after that does not matter. A subscription's messages wait in a bounded channel; by default a full one drops the newest, which would lose
    /// messages silently — here the reader waits instead, and the socket with it (back-pressure). Pings every 5 s, two unanswered: a
    /// silent peer is noticed in about 15 s, not the library's 4 minutes.
    /// </summary>
    public static NatsOpts ClientOptions(string url, string name, BrokerCredentials? credentials, BrokerClientTls? tls = null) => new()
    {
        Url = CheckedUrl(url), Name = name, SubPendingChannelFullMode = System.Threading.Channels.BoundedChannelFullMode.Wait,
        ConnectTimeout = TimeSpan.FromSeconds(10), PingInterval = TimeSpan.FromSeconds(5), MaxPingOut = 2,
        AuthOpts = credentials is null ? NatsAuthOpts.Default : NatsAuthOpts.Default with { Username = credentials.UserName, Password = credentials.Password },
        // Plaintext stays plaintext at a broker that also offers TLS (a Tls=false+true build's), where the library would otherwise
        // prefer TLS; a tls:// URL of the user's own keeps the library's default.
        TlsOpts = tls is not null ? Secured(url, tls)
            : url.StartsWith("tls://", StringComparison.OrdinalIgnoreCase) ? NatsTlsOpts.Default : NatsTlsOpts.Default with { Mode = TlsMode.Disable },
    };

    /// <summary>TLS required, the server's certificate chained to the authority alone and naming the URL's host (the library's own checks replaced); the client's certificate presented if it has one.</summary>
    private static NatsTlsOpts Secured(string url, BrokerClientTls tls) => NatsTlsOpts.Default with
    {
        Mode = TlsMode.Require,
        ConfigureClientAuthentication = options =>
        {
            var ours = Hosting.TlsCertificates.ClientOptions(new Uri(url.Split(',')[0]).Host, tls.Authority);
            options.TargetHost = ours.TargetHost;
            options.EnabledSslProtocols = ours.EnabledSslProtocols;
            options.CertificateChainPolicy = ours.CertificateChainPolicy;
            options.RemoteCertificateValidationCallback = null;
            if (tls.Certificate is { } mine)
                options.ClientCertificates = [mine];
            return ValueTask.CompletedTask;
        },
    };

    /// <summary>A server's connection: as a client's, and it reconnects (without limit, the library's default) soon after a broker restart.</summary>
    public static NatsOpts ServerOptions(string url, string name, BrokerCredentials? credentials, BrokerClientTls? tls = null) => ClientOptions(url, name, credentials, tls) with
    {
        ReconnectWaitMin = TimeSpan.FromMilliseconds(100), ReconnectWaitMax = TimeSpan.FromSeconds(1),
    };

    /// <summary>
    /// The server URL as given (nats://host:port, or several separated by commas), refused with IT1001 when one is not a URL of a
    /// NATS scheme with a host: the library would fail later with an error of its own, or try to reach something else.
    /// </summary>
    public static string CheckedUrl(string url)
    {
        foreach (var one in url.Split(',', StringSplitOptions.TrimEntries))
        {
            if (!Uri.TryCreate(one, UriKind.Absolute, out var uri) || uri.Scheme is not ("nats" or "tls" or "ws" or "wss") || uri.Host.Length == 0)
                throw new IntegrationException(ErrorCodes.InvalidParameter,
                    $"NatsUrl '{url}' is not a NATS server's URL: nats://host:port (or several, separated by commas).");
        }
        return url;
    }

    public static async Task ConnectAsync(NatsConnection connection, string url, BrokerCredentials? credentials, CancellationToken cancellationToken, BrokerClientTls? tls = null)
    {
        try
        {
            await connection.ConnectAsync().AsTask().WaitAsync(cancellationToken).ConfigureAwait(false);
        }
        catch (NatsException e) when (e.InnerException is NatsServerException { Message: var refusal } && refusal.Contains("maximum connections exceeded", StringComparison.OrdinalIgnoreCase))
        {
            throw new IntegrationException(ErrorCodes.ServerBusy,
                $"NATS at {url} refused the connection: its connection limit is reached ({refusal}); raise NatsMaxConnections or run fewer clients.", e);
        }
        catch (NatsException e) when (Streams.TlsConnector.HandshakeRefusal(e) is { } refused)
        {
            throw new IntegrationException(ErrorCodes.TlsRefused, $"TLS with NATS at {url} failed: {refused.Message}", e);
        }
        catch (NatsException e) when (e.InnerException is NatsServerException { Message: var refusal } && refusal.Contains("authorization violation", StringComparison.OrdinalIgnoreCase))
        {
            throw new IntegrationException(ErrorCodes.CredentialsRefused, credentials is null
                ? $"NATS at {url} takes only its user, and this client has no credentials (CredentialsFile; BrokerCredentials=true)."
                : $"NATS at {url} refused {credentials}: wrong user or password.", e);
        }
        catch (NatsException e)
        {
            if (tls is not null && Uri.TryCreate(url.Split(',')[0], UriKind.Absolute, out var first)
                && await tls.MissingCertificateAsync("NATS", first.Host, first.Port, e, cancellationToken).ConfigureAwait(false) is { } missing)
                throw missing;
            throw new IntegrationException(ErrorCodes.BrokerUnavailable, $"NATS at {url} did not accept a connection: {e.Message}", e);
        }
    }

    /// <summary>
    /// Runs <paramref name="work"/> until it ends or the connection drops, whichever is first: a dropped connection cancels the work
    /// and fails with IT3006 (the resume loop then asks again, on a new connection, for what is not committed).
    /// </summary>
    public static async Task RunUntilLostAsync(NatsConnection connection, string url, CancellationTokenSource cancellation, Func<Task> work)
    {
        var lost = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        connection.ConnectionDisconnected += OnDisconnected;
        try
        {
            await TaskGroup.RunUntilBrokenAsync(lost.Task, cancellation, work).ConfigureAwait(false);
        }
        catch (NatsException e) when (e is not NatsNoReplyException and not NatsNoRespondersException)
        {
            throw new IntegrationException(ErrorCodes.ConnectionLost, $"The connection to NATS at {url} failed: {e.Message}", e);
        }
        finally
        {
            connection.ConnectionDisconnected -= OnDisconnected;
        }

        ValueTask OnDisconnected(object? sender, NatsEventArgs args)
        {
            lost.TrySetException(new IntegrationException(ErrorCodes.ConnectionLost, $"The connection to NATS at {url} was lost: {args.Message}"));
            return ValueTask.CompletedTask;
        }
    }

    /// <summary>The header of a reply that refuses its request: the server's coded error ("IT2004: …").</summary>
    public const string ErrorHeader = "IntegrationTasks-Error";

    public static NatsHeaders Refusal(IntegrationException e) => new() { [ErrorHeader] = CodedError.Format(e) };

    /// <summary>The server's refusal of a batch, with the server's code, when the reply is one.</summary>
    public static void ThrowIfRefused(NatsHeaders? headers, int batch)
    {
        if (headers is null || !headers.TryGetValue(ErrorHeader, out var refusal))
            return;
        throw CodedError.Refusal(refusal.ToString(), batch);
    }
}
