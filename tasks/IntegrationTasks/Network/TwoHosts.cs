using System.Globalization;
using System.Text.RegularExpressions;
using IntegrationTasks.Common;
using IntegrationTasks.Hosting;

namespace IntegrationTasks.Network;

/// <summary>
/// The series' two machines, simulated: two network namespaces joined by a veth pair, with addresses from the range
/// reserved for network benchmarking (198.18.0.0/15, RFC 2544) so they can never be a real network's, and the link
/// shaped by <c>tbf</c> when a bandwidth is given. Disposing removes both namespaces (and so the link).
/// </summary>
public sealed partial class TwoHosts : IAsyncDisposable
{
    public const string ServerAddress = "198.18.0.1";
    public const string ClientAddress = "198.18.0.2";
    private const string Prefix = "it-";
    private static readonly TimeSpan CommandTimeout = TimeSpan.FromSeconds(20);
    private readonly IEventLog _log;
    private bool _removed;

    private TwoHosts(string id, IEventLog log)
    {
        _log = log;
        ServerNamespace = $"{Prefix}srv-{id}";
        ClientNamespace = $"{Prefix}cli-{id}";
        ServerLink = $"itv{id}s";
        ClientLink = $"itv{id}c";
    }

    public string ServerNamespace { get; }
    public string ClientNamespace { get; }
    public string ServerLink { get; }
    public string ClientLink { get; }

    /// <summary>The words that run a command inside a namespace.</summary>
    public static IReadOnlyList<string> Exec(string ns) => ["ip", "netns", "exec", ns];

    /// <summary>Creates both namespaces and the link; on any failure removes what was made.</summary>
    /// <param name="id">Part of every name; the creating process's id, so that a leftover of a dead build can be told apart.</param>
    /// <param name="privileged">Whether this process may make namespaces; by default, whether it runs as root.</param>
    public static async Task<TwoHosts> CreateAsync(int id, double? bandwidthMbit, IEventLog log, CancellationToken cancellationToken, bool? privileged = null)
    {
        if (!(privileged ?? Environment.IsPrivilegedProcess))
            throw new IntegrationException(ErrorCodes.NeedsRoot,
                "Two hosts are two Linux network namespaces joined by a veth pair, and making them needs root (run the build as root, or leave Hosts at One).");
        await RemoveLeftoversAsync(log, cancellationToken).ConfigureAwait(false);
        var hosts = new TwoHosts(id.ToString(CultureInfo.InvariantCulture), log);
        try
        {
            await hosts.BuildAsync(bandwidthMbit, cancellationToken).ConfigureAwait(false);
            return hosts;
        }
        catch
        {
            await hosts.DisposeAsync().ConfigureAwait(false);
            throw;
        }
    }

    private async Task BuildAsync(double? bandwidthMbit, CancellationToken cancellationToken)
    {
        await IpAsync(cancellationToken, "netns", "add", ServerNamespace).ConfigureAwait(false);
        await IpAsync(cancellationToken, "netns", "add", ClientNamespace).ConfigureAwait(false);
        await IpAsync(cancellationToken, "link", "add", ServerLink, "type", "veth", "peer", "name", ClientLink).ConfigureAwait(false);
        await IpAsync(cancellationToken, "link", "set", ServerLink, "netns", ServerNamespace).ConfigureAwait(false);
        await IpAsync(cancellationToken, "link", "set", ClientLink, "netns", ClientNamespace).ConfigureAwait(false);
        foreach (var (ns, link, address) in new[] { (ServerNamespace, ServerLink, ServerAddress), (ClientNamespace, ClientLink, ClientAddress) })
        {
            await IpAsync(cancellationToken, "-n", ns, "addr", "add", $"{address}/30", "dev", link).ConfigureAwait(false);
            await IpAsync(cancellationToken, "-n", ns, "link", "set", "lo", "up").ConfigureAwait(false);
            await IpAsync(cancellationToken, "-n", ns, "link", "set", link, "up").ConfigureAwait(false);
            if (bandwidthMbit is { } rate)
            {
                // tbf: the bucket holds 10 ms of traffic (at least 32 KB, above what one timer tick at HZ=250 lets through at 1 Gbit/s
                // would need less), and a packet waits at most 100 ms in the queue before it is dropped (TCP then backs off, as on a real link).
                var burstBytes = Math.Max(32 * 1024, (long)(rate * 1_000_000 / 8 / 100));
                await RunAsync("tc", cancellationToken, "-n", ns, "qdisc", "add", "dev", link, "root", "tbf",
                    "rate", string.Create(CultureInfo.InvariantCulture, $"{rate * 1000:0}kbit"), "burst", burstBytes.ToString(CultureInfo.InvariantCulture),
                    "latency", "100ms").ConfigureAwait(false);
            }
        }
        _log.Info($"Two hosts: {ServerNamespace} ({ServerAddress}) and {ClientNamespace} ({ClientAddress}) joined by {ServerLink}–{ClientLink}" +
                  (bandwidthMbit is { } b ? string.Create(CultureInfo.InvariantCulture, $", {b:0.###} Mbit/s each way (tbf).") : ", not shaped."));
    }

    /// <summary>Namespaces of ours whose creating process is gone (a build killed outright): removed before making new ones.</summary>
    public static async Task RemoveLeftoversAsync(IEventLog log, CancellationToken cancellationToken)
    {
        foreach (var ns in await ListAsync(cancellationToken).ConfigureAwait(false))
        {
            if (OurName().Match(ns) is not { Success: true } match || ProcessIsAlive(int.Parse(match.Groups[1].Value, CultureInfo.InvariantCulture)))
                continue;
            log.Warning(ErrorCodes.LeftoverRemoved, $"Removed the network namespace {ns}, left behind by a build that no longer runs.");
            await RunAsync("ip", cancellationToken, "netns", "del", ns).ConfigureAwait(false);
        }
    }

    /// <summary>The namespaces that exist now (ip netns list).</summary>
    public static async Task<List<string>> ListAsync(CancellationToken cancellationToken)
    {
        var outcome = await ExternalCommand.RunAsync("ip", ["netns", "list"], CommandTimeout, cancellationToken).ConfigureAwait(false);
        return outcome.Output.Split('\n', StringSplitOptions.RemoveEmptyEntries).Select(line => line.Split(' ')[0]).ToList();
    }

    [GeneratedRegex(@"^it-(?:srv|cli)-(\d+)$")]
    private static partial Regex OurName();

    private static bool ProcessIsAlive(int pid) => Directory.Exists($"/proc/{pid}");

    private static Task IpAsync(CancellationToken cancellationToken, params string[] arguments) => RunAsync("ip", cancellationToken, arguments);

    private static async Task RunAsync(string program, CancellationToken cancellationToken, params string[] arguments)
    {
        var outcome = await ExternalCommand.RunAsync(program, arguments, CommandTimeout, cancellationToken,
            installHint: "Install iproute2 (apt-get install -y iproute2).").ConfigureAwait(false);
        if (outcome.ExitCode != 0)
            throw new IntegrationException(ErrorCodes.NetworkSetupFailed,
                $"{program} {string.Join(' ', arguments)} failed ({outcome.ExitCode}): {outcome.Errors.Trim()}{(outcome.Errors.Contains("netem") ? " (this kernel has no netem)" : "")}");
    }

    public async ValueTask DisposeAsync()
    {
        if (_removed)
            return;
        _removed = true;
        // Removing a namespace removes the veth end in it, and with it the peer. Not cancellable: a half-removed setup is worse.
        var existing = await ListAsync(CancellationToken.None).ConfigureAwait(false);
        foreach (var ns in new[] { ServerNamespace, ClientNamespace }.Where(existing.Contains))
        {
            try
            {
                await RunAsync("ip", CancellationToken.None, "netns", "del", ns).ConfigureAwait(false);
            }
            catch (IntegrationException e)
            {
                _log.Warning(e.Code, $"Could not remove the network namespace {ns}: {e.Message}");
            }
        }
    }
}
