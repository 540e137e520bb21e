namespace IntegrationTasks.Abstractions;

/// <summary>
/// A transport of your own, as the suite runs it beside its own: what it is called, how its server is reached, what it supports,
/// and its client and server. The suite finds every public, non-abstract subclass with a public parameterless constructor in the
/// assembly an <c>ExternalTransport</c> item names, and runs the one whose <see cref="Name"/> the item gives.
/// </summary>
public abstract class Transport
{
    /// <summary>The transport's name in <c>-p:Transports=…</c>, the report and the results (the <c>ExternalTransport</c> item's Include).</summary>
    public abstract string Name { get; }

    /// <summary>How its server is reached: on a TCP port (the default), or some other way.</summary>
    public virtual TransportServerKind ServerKind => TransportServerKind.TcpPort;

    /// <summary>What the transport supports beyond one client in lock-step; the suite refuses what it does not (IT1001) before a run.</summary>
    public virtual TransportCapabilities Capabilities => TransportCapabilities.None;

    /// <summary>
    /// The settings its client and server take (the <c>ExternalTransport</c> item's Settings, <c>Name=Value,…</c>), read typed with the
    /// sessions' <c>ValueOf</c>; any other name, or a value a setting does not take, is refused before a run (IT1001).
    /// </summary>
    public virtual IReadOnlyCollection<TransportSetting> Settings => [];

    /// <summary>A client for one attempt at a client's batches; made again after a broken connection.</summary>
    public abstract TransportClient CreateClient();

    /// <summary>The server, made once in the server's own process.</summary>
    public abstract TransportServer CreateServer();
}

/// <summary>How a transport's server is reached.</summary>
public enum TransportServerKind
{
    /// <summary>On a TCP port (the item's Port): the suite checks it is free before starting the server, and can put its relay in front
    /// of it (latency, bandwidth, faults).</summary>
    TcpPort,

    /// <summary>Some other way (a Unix socket, a folder): no port checked, no relay, so no latency profile or fault for it.</summary>
    NoPort,
}

/// <summary>What a transport supports beyond one client asking for one batch at a time.</summary>
[Flags]
public enum TransportCapabilities
{
    /// <summary>One client; a broken connection ends the run (IT3006).</summary>
    None = 0,

    /// <summary>Runs as several clients at once (<c>Clients</c>), each with a session of its own and its own share of the batches.</summary>
    ManyClients = 1,

    /// <summary>After a broken connection (<see cref="TransportError.ConnectionLost"/>), the suite makes a new client and asks it for the
    /// batches not committed (with backoff, up to <c>MaxReconnects</c>): the faults Reset, Silence and KillServer are survived.</summary>
    Resumes = 2,

    /// <summary>Keeps up to <see cref="ClientSession.MaxInFlight"/> batches asked for at once (recorded so in the report).</summary>
    Pipelines = 4,

    /// <summary>Its server takes only clients that prove who they are (credentials of its own, from its settings): the suite lets it
    /// listen beyond loopback (two hosts, another BindAddress). Without it, such a server is refused before it binds (IT1001).</summary>
    AuthenticatesClients = 8,
}
