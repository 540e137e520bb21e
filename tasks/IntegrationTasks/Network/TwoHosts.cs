using System.Globalization;
using System.Text.RegularExpressions;
using IntegrationTasks.Hosting;

namespace IntegrationTasks.Network;

/// <summary>
/// The series' two machines, simulated: two network namespaces joined by a veth pair, with addresses from the range
/// reserved for network benchmarking (198.18.0.0/15, RFC 2544) so they can never be a real network's, and the link
/// shaped by <c>tbf</c> when a bandwidth is given. Disposing removes both namespaces (and so the link).
/// With more client hosts (many client machines against one server), each has a link of its own to the server's namespace
/// (client k: 198.18.0.4k+2, the server's end 198.18.0.4k+1) and a route to the server's address over it.
/// </summary>
public sealed partial class TwoHosts : IAsyncDisposable
{
    public const string ServerAddress = "198.18.0.1";
    public const string ClientAddress = "198.18.0.2";
    private const string Prefix = "it-";
    private static readonly TimeSpan CommandTimeout = TimeSpan.FromSeconds(20);
    private readonly IEventLog _log;
    private bool _removed;

    private TwoHosts(string id, int clientHosts, IEventLog log)
    {
        _log = log;
        ServerNamespace = $"{Prefix}srv-{id}";
        ClientNamespaces = [.. Enumerable.Range(0, clientHosts).Select(k => k == 0 ? $"{Prefix}cli-{id}" : $"{Prefix}cli{k + 1}-{id}")];
        ServerLinks = [.. Enumerable.Range(0, clientHosts).Select(k => k == 0 ? $"itv{id}s" : $"itv{id}s{k + 1}")];
        ClientLinks = [.. Enumerable.Range(0, clientHosts).Select(k => k == 0 ? $"itv{id}c" : $"itv{id}c{k + 1}")];
    }

    public string ServerNamespace { get; }
    public string ClientNamespace => ClientNamespaces[0];
    public string ServerLink => ServerLinks[0];
    public string ClientLink => ClientLinks[0];

    /// <summary>One namespace per client host (the first is <see cref="ClientNamespace"/>).</summary>
    public IReadOnlyList<string> ClientNamespaces { get; }
    private IReadOnlyList<string> ServerLinks { get; }
    private IReadOnlyList<string> ClientLinks { get; }

    /// <summary>Client host k's address (the first is <see cref="ClientAddress"/>).</summary>
    public static string ClientAddressOf(int k) => string.Create(CultureInfo.InvariantCulture, $"198.18.0.{4 * k + 2}");

    /// <summary>The most client hosts (each link a /30 of 198.18.0.0/24).</summary>
    public const int MaxClientHosts = 32;

    /// <summary>The words that run a command inside a namespace.</summary>
    public static IReadOnlyList<string> Exec(string ns) => ["ip", "netns", "exec", ns];

    /// <summary>Creates both namespaces and the link; on any failure removes what was made.</summary>
    /// <param name="id">Part of every name; the creating process's id, so that a leftover of a dead build can be told apart.</param>
    /// <param name="privileged">Whether this process may make namespaces; by default, whether it runs as root.</param>
    /// <param name="clientHosts">Client hosts against the one server host (1: the series' two machines).</param>
    public static async Task<TwoHosts> CreateAsync(int id, double? bandwidthMbit, IEventLog log, CancellationToken cancellationToken, bool? privileged = null,
        int clientHosts = 1)
    {
        if (!(privileged ?? Environment.IsPrivilegedProcess))
            throw new IntegrationException(ErrorCodes.NeedsRoot,
                "Two hosts are two Linux network namespaces joined by a veth pair, and making them needs root (run the build as root, or leave Hosts at One).");
        if (clientHosts < 1 || clientHosts > MaxClientHosts)
            throw new IntegrationException(ErrorCodes.InvalidParameter, $"Client hosts must be between 1 and {MaxClientHosts} (was {clientHosts}).");
        await RemoveLeftoversAsync(log, cancellationToken).ConfigureAwait(false);
        var hosts = new TwoHosts(id.ToString(CultureInfo.InvariantCulture), clientHosts, log);
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
        var ends = new List<(string Namespace, string Link, string Address)>();
        for (var k = 0; k < ClientNamespaces.Count; k++)
        {
            await IpAsync(cancellationToken, "netns", "add", ClientNamespaces[k]).ConfigureAwait(false);
            await IpAsync(cancellationToken, "link", "add", ServerLinks[k], "type", "veth", "peer", "name", ClientLinks[k]).ConfigureAwait(false);
            await IpAsync(cancellationToken, "link", "set", ServerLinks[k], "netns", ServerNamespace).ConfigureAwait(false);
            await IpAsync(cancellationToken, "link", "set", ClientLinks[k], "netns", ClientNamespaces[k]).ConfigureAwait(false);
            var serverEnd = string.Create(CultureInfo.InvariantCulture, $"198.18.0.{4 * k + 1}");
            ends.Add((ServerNamespace, ServerLinks[k], serverEnd));
            ends.Add((ClientNamespaces[k], ClientLinks[k], ClientAddressOf(k)));
        }
        foreach (var (ns, link, address) in ends)
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
        // A later client host reaches the server's address (on the first link) over its own link: the server's namespace owns that address.
        for (var k = 1; k < ClientNamespaces.Count; k++)
            await IpAsync(cancellationToken, "-n", ClientNamespaces[k], "route", "add", $"{ServerAddress}/32",
                "via", string.Create(CultureInfo.InvariantCulture, $"198.18.0.{4 * k + 1}")).ConfigureAwait(false);
        _log.Info($"Two hosts: {ServerNamespace} ({ServerAddress}) and {ClientNamespace} ({ClientAddress}) joined by {ServerLink}–{ClientLink}" +
                  (ClientNamespaces.Count > 1 ? $", and {ClientNamespaces.Count - 1} more client hosts ({string.Join(", ", ClientNamespaces.Skip(1))}) each by a link of its own" : "") +
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

    [GeneratedRegex(@"^it-(?:srv|cli\d*)-(\d+)$")]
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
        foreach (var ns in new[] { ServerNamespace }.Concat(ClientNamespaces).Where(existing.Contains))
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
