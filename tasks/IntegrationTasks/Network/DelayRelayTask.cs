using System.Globalization;
using System.Net;
using IntegrationTasks.Common;
using IntegrationTasks.Hosting;
using Microsoft.Build.Framework;

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

    /// <summary>The network profile (Loopback, Lan2014, Wan) whose round trip the relay adds, half each way.</summary>
    public string Network { get; set; } = "";

    /// <summary>Overrides the profile's round trip, in milliseconds; decimals allowed.</summary>
    public string LatencyMs { get; set; } = "";

    /// <summary>None, Reset, Silence or KillServer (with KillPidFile).</summary>
    public string Fault { get; set; } = nameof(RelayFaultKind.None);
    public long FaultAfterBytes { get; set; } = 1_000_000;
    public int SilenceSeconds { get; set; } = 5;

    /// <summary>For KillServer: the file holding the server's current process id (StartServer's PidFile).</summary>
    public string? KillPidFile { get; set; }
    public bool StopOnStdinClose { get; set; }

    protected override bool CancellationIsSuccess => true;

    protected override async Task ExecuteAsync(CancellationToken cancellationToken)
    {
        var latency = NetworkProfile.Parse(Network, LatencyMs, bandwidthMbit: null).LatencyMs;
        if (!Enum.TryParse<RelayFaultKind>(Fault, ignoreCase: true, out var fault))
            throw new IntegrationException(ErrorCodes.InvalidParameter, $"Unknown relay fault '{Fault}'. Use None, Reset, Silence or KillServer.");
        if (fault == RelayFaultKind.KillServer && string.IsNullOrEmpty(KillPidFile))
            throw new IntegrationException(ErrorCodes.InvalidParameter, "The KillServer fault needs KillPidFile: the file holding the server's process id.");
        if (!IPAddress.TryParse(ListenAddress, out var address))
            throw new IntegrationException(ErrorCodes.InvalidParameter, $"ListenAddress '{ListenAddress}' is not an IP address.");
        await using var relay = new DelayRelay(new RelayOptions
        {
            Listen = new IPEndPoint(address, ListenPort), TargetHost = TargetHost, TargetPort = TargetPort,
            OneWayDelay = TimeSpan.FromMilliseconds(latency / 2), Fault = fault, FaultAfterBytes = FaultAfterBytes,
            Silence = TimeSpan.FromSeconds(SilenceSeconds), KillPidFile = KillPidFile,
        }, EventLog);
        var endpoint = relay.Start();
        using var stop = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        if (StopOnStdinClose)
            _ = ServerSignals.StopWhenInputClosesAsync(stop.Cancel);
        Log.LogMessage(MessageImportance.High, "{0}", ServerSignals.ReadyLine($"tcp://{endpoint}",
            $"DelayRelay to {TargetHost}:{TargetPort}, {latency.ToString(CultureInfo.InvariantCulture)} ms round trip, fault {fault}"));
        await relay.RunAsync(stop.Token).ConfigureAwait(false);
        Log.LogMessage(MessageImportance.High, "DelayRelay stopped: {0:N0} connections, {1:N0} bytes forwarded{2}.",
            relay.Connections, relay.BytesForwarded, relay.FaultInjected ? ", fault injected" : "");
    }
}
