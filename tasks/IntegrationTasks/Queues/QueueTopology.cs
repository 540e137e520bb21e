using RabbitMQ.Client;

namespace IntegrationTasks.Queues;

/// <summary>
/// How the two queue transports differ — and nothing else does. Fast (the series' RabbitMQ test):
/// transient queues and messages, no publisher confirms. Durable (the role the series gave to
/// transactional MSMQ): durable queues, persistent messages, publisher confirms, an idempotent
/// import and correlation by batch alone, so a client or server killed and started again resumes.
/// Both ack only after the work is done and dead-letter what cannot be processed.
/// </summary>
public sealed partial record QueueTopology(string RequestQueue, string ReplyQueue, bool Durable)
{
    public static readonly QueueTopology Fast = new("integrationtests.in", "integrationtests.out", Durable: false);
    public static readonly QueueTopology Reliable = new("integrationtests.durable.in", "integrationtests.durable.out", Durable: true);

    public const string DeadLetterSuffix = ".dead";

    /// <summary>Client <paramref name="client"/> of several has a reply queue of its own (the first keeps the series' name), so no client takes another's answers.</summary>
    public QueueTopology ForClient(int client) =>
        client == 0 ? this : this with { ReplyQueue = $"{ReplyQueue}.{client.ToString(System.Globalization.CultureInfo.InvariantCulture)}" };

    /// <summary>
    /// The same on one of several client machines (<paramref name="machine"/>, its ClientMachine name): its clients have the numbers
    /// the other machines' clients have, so their reply queues carry the machine's name too (the same on its every run, which a
    /// durable queue's resume needs).
    /// </summary>
    public QueueTopology ForClient(int client, string? machine) =>
        string.IsNullOrEmpty(machine) ? ForClient(client)
            : this with { ReplyQueue = $"{ReplyQueue}.{MachinePart().Replace(machine, "-")}.{client.ToString(System.Globalization.CultureInfo.InvariantCulture)}" };

    [System.Text.RegularExpressions.GeneratedRegex("[^A-Za-z0-9]+")]
    private static partial System.Text.RegularExpressions.Regex MachinePart();

    public static string DeadLetterQueue(string queue) => queue + DeadLetterSuffix;

    /// <summary>Declares a queue and its dead-letter queue (a rejected message goes there, not back to the queue).</summary>
    public async Task DeclareAsync(IChannel channel, string queue, CancellationToken cancellationToken)
    {
        await channel.QueueDeclareAsync(DeadLetterQueue(queue), durable: Durable, exclusive: false, autoDelete: false,
            arguments: null, cancellationToken: cancellationToken).ConfigureAwait(false);
        await channel.QueueDeclareAsync(queue, durable: Durable, exclusive: false, autoDelete: false,
            arguments: new Dictionary<string, object?>
            {
                ["x-dead-letter-exchange"] = "",
                ["x-dead-letter-routing-key"] = DeadLetterQueue(queue),
            }, cancellationToken: cancellationToken).ConfigureAwait(false);
    }

    public BasicProperties Properties(string correlationId, string? replyTo) => new()
    {
        CorrelationId = correlationId,
        ReplyTo = replyTo,
        ContentType = "text/xml",
        DeliveryMode = Durable ? DeliveryModes.Persistent : DeliveryModes.Transient,
    };

    public CreateChannelOptions ChannelOptions(int outstandingConfirms) => Durable
        ? new CreateChannelOptions(publisherConfirmationsEnabled: true, publisherConfirmationTrackingEnabled: true,
            outstandingPublisherConfirmationsRateLimiter: new ThrottlingRateLimiter(outstandingConfirms))
        : new CreateChannelOptions(publisherConfirmationsEnabled: false, publisherConfirmationTrackingEnabled: false);
}

public sealed record BrokerOptions
{
    public string HostName { get; init; } = SettingDefaults.HostName;
    public int Port { get; init; } = 5673;
    public string UserName { get; init; } = "guest";
    public string Password { get; init; } = "guest";

    /// <summary>AMQPS: the authority the broker's certificate must chain to, and the client's certificate if it presents one; null: plaintext AMQP.</summary>
    public BrokerClientTls? ClientTls { get; init; }

    /// <summary>The broker at <paramref name="hostName"/>, logged in as the credentials file's user, or as guest when none is given.</summary>
    public static BrokerOptions For(string hostName, int port, string credentialsFile, BrokerClientTls? clientTls = null) =>
        BrokerCredentials.Load(credentialsFile) is { } credentials
            ? new BrokerOptions { HostName = hostName, Port = port, UserName = credentials.UserName, Password = credentials.Password, ClientTls = clientTls }
            : new BrokerOptions { HostName = hostName, Port = port, ClientTls = clientTls };

    /// <summary>Prints where and who, never the password (a record would print every property).</summary>
    public override string ToString() => $"RabbitMQ at {HostName}:{Port} as {UserName}";

    public async Task<IConnection> ConnectAsync(string clientName, CancellationToken cancellationToken)
    {
        var factory = new ConnectionFactory
        {
            HostName = HostName, Port = Port, UserName = UserName, Password = Password, ClientProvidedName = clientName,
            AutomaticRecoveryEnabled = false,
            // A connection cut mid-frame can leave the client's frame reader at end of stream with half a frame, spinning until
            // heartbeats lapse (seen under the relay's Reset: RabbitMQ.Client's InboundFrame.ReadFromPipeAsync spinning a core for
            // minutes with the default 60 s). 10 s bounds that and is still far above any honest pause.
            RequestedHeartbeat = TimeSpan.FromSeconds(10),
        };
        if (ClientTls is { } tls)
            factory.Ssl = new SslOption
            {
                Enabled = true, ServerName = HostName, Version = Hosting.TlsCertificates.Protocols, CertificateValidationCallback = tls.Trusts,
                Certs = tls.Certificate is { } mine ? [mine] : null,
            };
        try
        {
            return await factory.CreateConnectionAsync(cancellationToken).ConfigureAwait(false);
        }
        catch (RabbitMQ.Client.Exceptions.BrokerUnreachableException e) when (ClientTls is not null && Streams.TlsConnector.HandshakeRefusal(e) is { } refused)
        {
            throw new IntegrationException(ErrorCodes.TlsRefused, $"TLS with RabbitMQ at {HostName}:{Port} failed: {refused.Message}", e);
        }
        catch (RabbitMQ.Client.Exceptions.BrokerUnreachableException e) when (e.InnerException is RabbitMQ.Client.Exceptions.AuthenticationFailureException)
        {
            throw new IntegrationException(ErrorCodes.CredentialsRefused, UserName == "guest"
                ? $"RabbitMQ at {HostName}:{Port} refused guest, which it takes only from loopback; this client needs the broker's credentials (CredentialsFile; BrokerCredentials=true)."
                : $"RabbitMQ at {HostName}:{Port} refused user {UserName}: wrong user or password.", e);
        }
        catch (RabbitMQ.Client.Exceptions.BrokerUnreachableException e) when (IsConnectionLimit(e.ToString()))
        {
            throw Refused(Innermost(e).Message, e);
        }
        catch (RabbitMQ.Client.Exceptions.BrokerUnreachableException e)
        {
            if (ClientTls is not null && await ClientTls.MissingCertificateAsync("RabbitMQ", HostName, Port, e, cancellationToken).ConfigureAwait(false) is { } missing)
                throw missing;
            throw new IntegrationException(ErrorCodes.BrokerUnavailable,
                $"Cannot reach RabbitMQ at {HostName}:{Port}: {e.InnerException?.Message ?? e.Message}. " +
                "Start the suite's broker with: dotnet msbuild build.proj -t:StartRabbitMQ (or set RabbitMQHostName).", e);
        }
    }

    /// <summary>The broker's own refusal at login when its virtual host's connection limit is reached.</summary>
    private static bool IsConnectionLimit(string reason) => reason.Contains("connection limit", StringComparison.OrdinalIgnoreCase);

    private IntegrationException Refused(string reason, Exception? inner) => new(ErrorCodes.ServerBusy,
        $"RabbitMQ at {HostName}:{Port} refused the connection: {reason} — the most clients the broker takes at once (-p:RabbitMQMaxConnections); try again later.", inner);

    /// <summary>
    /// What a connection closed by the broker means: its connection limit reached (the broker may close a connection it has just
    /// opened, at login), IT3008; anything else, a break (IT3006).
    /// </summary>
    public IntegrationException Closed(string reason, Exception? inner = null) => IsConnectionLimit(reason)
        ? Refused(reason, inner)
        : new IntegrationException(ErrorCodes.ConnectionLost, $"The connection to RabbitMQ at {HostName}:{Port} broke: {reason}", inner);

    private static Exception Innermost(Exception e)
    {
        while (e.InnerException is not null)
            e = e.InnerException;
        return e;
    }
}
