using System.Globalization;
using System.Net;
using IntegrationTasks.Hosting;

namespace IntegrationTasks.Network;

/// <summary>
/// The delay relay as a server of the suite: listens, forwards to a transport's server with the one-way delay and
/// the fault asked for, prints the ready line, and stops on Ctrl+C or when the suite closes its input.
/// </summary>
public sealed class DelayRelayTask : IntegrationTask
{
    public string ListenAddress { get; set; } = "127.0.0.1";
    [Required] public int ListenPort { get; set; }
    [Required] public string TargetHost { get; set; } = "";
    [Required] public int TargetPort { get; set; }

    /// <summary>With a server on a Unix socket (Connector=Unix): the relay listens at ListenPath and forwards to TargetPath instead.</summary>
    public string ListenPath { get; set; } = "";
    public string TargetPath { get; set; } = "";

    /// <summary>The network profile (Loopback, Lan2014, Wan) whose round trip the relay adds, half each way.</summary>
    public string Network { get; set; } = "";

    /// <summary>Overrides the profile's round trip, in milliseconds; decimals allowed.</summary>
    public string LatencyMs { get; set; } = "";

    /// <summary>None, Reset, Silence, KillServer or RestartBroker (these two with KillPidFile).</summary>
    public string Fault { get; set; } = nameof(RelayFaultKind.None);
    public long FaultAfterBytes { get; set; } = SettingDefaults.FaultAfterBytes;
    public int SilenceSeconds { get; set; } = SettingDefaults.SilenceSeconds;

    /// <summary>For KillServer: the file holding the server's current process id (StartServer's PidFile); for RestartBroker, the broker's.</summary>
    public string? KillPidFile { get; set; }

    /// <summary>For KillServer of a server on another machine (RestartBroker of a broker there): its place (<see cref="Hosting.Remote.MachinePlace"/>'s
    /// file) and its name there (the server's, or the broker's: NATS, Redis, RabbitMQ).</summary>
    public string KillServerMachinePlace { get; set; } = "";
    public string KillServerName { get; set; } = "";
    public bool StopOnStdinClose { get; set; }

    /// <summary>KillServer also cuts the connection at the threshold (false when the relay forwards to a broker, not to the server).</summary>
    public bool CutOnKill { get; set; } = true;

    /// <summary>Where to write, when the relay stops, whether its fault landed, where and when (<see cref="RelayFaultReport"/>).</summary>
    public string? FaultReportFile { get; set; }

    protected override bool CancellationIsSuccess => true;

    protected override async Task ExecuteAsync(CancellationToken cancellationToken)
    {
        var latency = NetworkProfile.Parse(Network, LatencyMs, bandwidthMbit: null).LatencyMs;
        if (!Enum.TryParse<RelayFaultKind>(Fault, ignoreCase: true, out var fault))
            throw new IntegrationException(ErrorCodes.InvalidParameter, $"Unknown relay fault '{Fault}'. Use None, Reset, Silence, KillServer or RestartBroker.");
        var place = Hosting.Remote.MachinePlace.Read(KillServerMachinePlace);
        if (fault is RelayFaultKind.KillServer or RelayFaultKind.RestartBroker && string.IsNullOrEmpty(KillPidFile) && place is null)
            throw new IntegrationException(ErrorCodes.InvalidParameter, $"The {fault} fault needs KillPidFile: the file holding the process id of what it stops.");
        if (!IPAddress.TryParse(ListenAddress, out var address))
            throw new IntegrationException(ErrorCodes.InvalidParameter, $"ListenAddress '{ListenAddress}' is not an IP address.");
        await using var relay = new DelayRelay(new RelayOptions
        {
            Listen = TargetPath.Length > 0 ? new System.Net.Sockets.UnixDomainSocketEndPoint(RequirePath(ListenPath)) : new IPEndPoint(address, ListenPort),
            TargetHost = TargetHost, TargetPort = TargetPort, TargetPath = TargetPath.Length > 0 ? TargetPath : null,
            OneWayDelay = TimeSpan.FromMilliseconds(latency / 2), Fault = fault, FaultAfterBytes = FaultAfterBytes,
            Silence = TimeSpan.FromSeconds(SilenceSeconds), KillPidFile = place is null ? KillPidFile : null, CutOnKill = CutOnKill,
            KillServerThere = place is null || fault != RelayFaultKind.KillServer ? null : token => place.KillServerAsync(KillServerName, token),
            StopBrokerThere = place is null || fault != RelayFaultKind.RestartBroker ? null : token => place.StopBrokerAsync(KillServerName, token),
        }, EventLog);
        if (!string.IsNullOrEmpty(FaultReportFile))
            File.Delete(FaultReportFile);
        var endpoint = relay.Start();
        using var stop = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        if (StopOnStdinClose)
            _ = ServerSignals.StopWhenInputClosesAsync(stop.Cancel);
        Log.LogMessage(MessageImportance.High, "{0}", ServerSignals.ReadyLine(endpoint is IPEndPoint ? $"tcp://{endpoint}" : $"unix://{endpoint}",
            $"DelayRelay to {(TargetPath.Length > 0 ? $"unix://{TargetPath}" : $"{TargetHost}:{TargetPort}")}, {latency.ToString(CultureInfo.InvariantCulture)} ms round trip, fault {fault}"));
        await relay.RunAsync(stop.Token).ConfigureAwait(false);
        var report = relay.Report();
        if (!string.IsNullOrEmpty(FaultReportFile))
            RelayFaultReport.Write(FaultReportFile, report);
        Log.LogMessage(MessageImportance.High, "DelayRelay stopped: {0:N0} connections, {1:N0} bytes forwarded ({2:N0} from the server){3}.",
            relay.Connections, relay.BytesForwarded, report.BytesFromServer,
            fault == RelayFaultKind.None ? "" : report.Injected ? $", fault {fault} injected at {report.InjectedAtSeconds:F3} s"
                : $", fault {fault} NOT injected (the server sent fewer than {FaultAfterBytes:N0} bytes)");
    }

    private static string RequirePath(string path) => path.Length > 0 ? path
        : throw new IntegrationException(ErrorCodes.InvalidParameter, "A relay to a Unix socket (TargetPath) needs ListenPath: the socket it listens on.");
}
