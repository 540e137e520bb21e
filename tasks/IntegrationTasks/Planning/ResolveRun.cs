using System.Globalization;
using IntegrationTasks.Transfer;

namespace IntegrationTasks.Planning;

/// <summary>The build's network settings a run is routed by: whether a relay stands in front of servers, and where it listens.</summary>
/// <param name="BrokerPidFolder">Where a broker the build started leaves its pid file, or its mark when it runs on the server machine
/// (RestartBroker needs one the build owns).</param>
public sealed record RelaySettings(bool UseRelay, string Fault, string HostName, int RelayPort, string RelaySocketPath, string BrokerPidFolder);

/// <summary>
/// How one run of a transport is carried out, from its definition and the build's network settings: its client and server, whether
/// a relay stands in front of the server (and with which fault), the targets that run it, and the properties its relayed client
/// is given in place of the server's endpoint.
/// </summary>
public sealed record RunRoute(TransportDefinition Definition, bool Relayed, string Fault, IReadOnlyList<string> RunTargets,
    IReadOnlyList<(string Name, string Value)> RelayedProperties)
{
    /// <summary>A relay whose target is the transport's server (not a broker) cuts the client's connection when it kills the server.</summary>
    public bool RelayCutsOnKill => Definition.RelayTargetPort.Length == 0;

    /// <summary>KillServer kills the server through the relay; it is then started again, as a service manager would.</summary>
    public bool RestartServerOnExit => Relayed && Fault == "KillServer";

    public static RunRoute For(TransportDefinition definition, RelaySettings settings)
    {
        var relayed = settings.UseRelay && definition.PortProperty.Length > 0;
        // A fault is injected only through the relay; RestartBroker only where the build owns the transport's broker.
        var fault = !relayed ? "None"
            : settings.Fault == "RestartBroker" && (definition.Broker.Length == 0 || !BuildOwnsBroker(settings.BrokerPidFolder, definition.Broker)) ? "None"
            : settings.Fault;
        if (!relayed)
            return new(definition, false, fault, ["RunClient", "_RecordRun"], []);
        List<(string, string)> properties =
        [
            ("Fault", fault),
            ("Relayed", "true"),
            (definition.HostProperty.Length > 0 ? definition.HostProperty : "HostName", "127.0.0.1"),
            (definition.PortProperty, settings.RelayPort.ToString(CultureInfo.InvariantCulture)),
            ("RelayTargetHost", definition.RelayTargetHost.Length > 0 ? definition.RelayTargetHost : settings.HostName),
            ("RelayTargetPort", definition.RelayTargetPort.Length > 0 ? definition.RelayTargetPort : definition.ServerPort.ToString(CultureInfo.InvariantCulture)),
        ];
        // A server on a Unix socket: the relay listens on a socket of its own, which the client is given instead.
        if (definition.RelayPathProperty.Length > 0)
            properties.AddRange([(definition.RelayPathProperty, settings.RelaySocketPath), ("RelayTargetPath", definition.RelayTargetPath)]);
        return new(definition, true, fault, ["_DefineTransport", "_StartRelay", "RunClient", "_StopRelay", "_RecordRun"], properties);
    }

    /// <summary>The build started this broker: here (its pid file) or on the server machine (the mark its start there leaves here).</summary>
    public static bool BuildOwnsBroker(string folder, string broker) =>
        File.Exists(Path.Combine(folder, $"{broker}.broker.pid")) || File.Exists(Path.Combine(folder, BrokerThereMark(broker)));

    /// <summary>The file name of the mark left here while this build's broker runs on the server machine.</summary>
    public static string BrokerThereMark(string broker) => $"{broker}.broker.there";
}

/// <summary>
/// A run's route (<see cref="RunRoute"/>) as properties for the targets that carry it out: RunAll's planned runs and servers, and a
/// client machine's run. A property given explicitly wins over these (the peer, which is no definition, passes its own).
/// </summary>
public sealed class ResolveRun : IntegrationTask
{
    [Required] public ITaskItem[] Definitions { get; set; } = [];
    [Required] public string Transport { get; set; } = "";

    /// <summary>The client target already given (the peer's): a transport without a definition then runs as that client, unrelayed.</summary>
    public string GivenClientTarget { get; set; } = "";

    public bool UseRelay { get; set; }
    public string Fault { get; set; } = "None";
    public string HostName { get; set; } = SettingDefaults.HostName;
    public int RelayPort { get; set; }
    public string RelaySocketPath { get; set; } = "";
    public string BrokerPidFolder { get; set; } = "";

    [Output] public string ClientTarget { get; private set; } = "";
    [Output] public string ServerTarget { get; private set; } = "";
    [Output] public int ServerPort { get; private set; }
    [Output] public string PortProperty { get; private set; } = "";
    [Output] public string ServerWork { get; private set; } = "";
    [Output] public string Broker { get; private set; } = "";

    /// <summary>Transport, Baseline or Reference: what the run is recorded as when the plan does not say.</summary>
    [Output] public string Kind { get; private set; } = "";

    [Output] public bool Relayed { get; private set; }
    [Output] public bool RelayCutsOnKill { get; private set; }
    [Output] public bool RestartServerOnExit { get; private set; }
    [Output] public string[] RunTargets { get; private set; } = [];

    /// <summary>
    /// The relayed client's global properties, each "Name=Value" (its fault, and the relay's endpoint in place of the server's): a
    /// list, so that MSBuild escapes each value, not the separators.
    /// </summary>
    [Output] public string[] RelayedProperties { get; private set; } = [];

    protected override Task ExecuteAsync(CancellationToken cancellationToken)
    {
        var item = Definitions.FirstOrDefault(d => string.Equals(d.ItemSpec, Transport, StringComparison.Ordinal));
        var definition = item is not null ? TransportDefinition.From(item)
            : GivenClientTarget.Length > 0 ? new TransportDefinition(Transport) { ClientTarget = GivenClientTarget }
            : throw new IntegrationException(ErrorCodes.InvalidParameter,
                $"'{Transport}' is not a transport (known: {string.Join(", ", Definitions.Select(d => d.ItemSpec))}).");
        var route = RunRoute.For(definition, new RelaySettings(UseRelay, Fault, HostName, RelayPort, RelaySocketPath, BrokerPidFolder));
        (ClientTarget, ServerTarget, ServerPort, PortProperty, ServerWork, Broker) =
            (definition.ClientTarget, definition.ServerTarget, definition.ServerPort, definition.PortProperty, definition.ServerWork, definition.Broker);
        Kind = definition.Reference ? "Reference" : definition.Baseline ? "Baseline" : "Transport";
        (Relayed, RelayCutsOnKill, RestartServerOnExit, RunTargets) = (route.Relayed, route.RelayCutsOnKill, route.RestartServerOnExit, [.. route.RunTargets]);
        RelayedProperties = [.. route.RelayedProperties.Select(p => $"{p.Name}={p.Value}")];
        return Task.CompletedTask;
    }
}
