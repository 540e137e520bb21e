using IntegrationTasks.Transfer;

namespace IntegrationTasks.Queues;

/// <summary>A server of one of the suite's brokers' transports: how it signs in to the broker, and over what.</summary>
public abstract class BrokerServerTask : TransferServerTask
{
    /// <summary>The broker's user and password (<see cref="BrokerCredentials"/>); empty: none (RabbitMQ's guest, loopback only).</summary>
    public string CredentialsFile { get; set; } = "";

    /// <summary>Over TLS: the broker's certificate must come from the authority in TlsFolder and name the broker's host.</summary>
    public bool Tls { get; set; }
    public string TlsFolder { get; set; } = "";

    /// <summary>Mutual TLS (with Tls): present the client certificate in TlsFolder (the broker then takes only clients of its authority).</summary>
    public bool ClientCertificates { get; set; }

    protected BrokerCredentials? Credentials => BrokerCredentials.Load(CredentialsFile);
    protected BrokerClientTls? ClientTls => BrokerClientTls.For(Tls, TlsFolder, ClientCertificates);
}

/// <summary>A client of one of the suite's brokers' transports: the largest reply it takes, how it signs in, and over what.</summary>
public abstract class BrokerClientTask : ResumingQueueClientTask
{
    /// <summary>The broker's user and password (<see cref="BrokerCredentials"/>); empty: none (RabbitMQ's guest, loopback only).</summary>
    public string CredentialsFile { get; set; } = "";

    /// <summary>Over TLS: the broker's certificate must come from the authority in TlsFolder and name the broker's host.</summary>
    public bool Tls { get; set; }
    public string TlsFolder { get; set; } = "";

    /// <summary>Mutual TLS (with Tls): present the client certificate in TlsFolder (the broker then takes only clients of its authority).</summary>
    public bool ClientCertificates { get; set; }

    protected BrokerCredentials? Credentials => BrokerCredentials.Load(CredentialsFile);
    protected BrokerClientTls? ClientTls => BrokerClientTls.For(Tls, TlsFolder, ClientCertificates);
}
