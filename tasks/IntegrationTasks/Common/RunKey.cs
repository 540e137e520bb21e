using System.Globalization;
using System.Text.Json.Serialization;

namespace IntegrationTasks.Common;

/// <summary>
/// What a run is, field by field: every setting the suite varies between runs. Each file a user reads (runs.jsonl, results.json,
/// results.csv, failures, the transports not run, Compare) carries these fields, so that two runs that differ in any of them — one
/// client or sixteen, loopback or a simulated WAN — are never mistaken for each other. Nothing parses a label back into a key.
/// </summary>
/// <param name="Provider">The client's database (ServiceTable's and ClientTable's provider are the same unless set apart).</param>
/// <param name="Network">Loopback, or the relay's profile (Lan2014, Wan, Custom).</param>
/// <param name="LatencyMs">The round trip the relay added; null without a relay.</param>
/// <param name="Rate">Open loop: batches a second each client sends; null for a closed loop.</param>
/// <param name="Fault">None, or the fault injected (Reset, Silence, KillServer, RestartBroker).</param>
/// <param name="Tls">Run in a Tls=true build: the transports' traffic went over TLS (the references', which move nothing over a wire, are its pairs).</param>
/// <param name="Hosts">One (this machine's loopback) or Two (the simulated server and client hosts).</param>
/// <param name="HostCpus">The two hosts' own CPUs, server/client ("0/1"); empty where they share every CPU.</param>
public sealed record RunKey(
    string Transport,
    RunKind Kind,
    [property: JsonIgnore(Condition = JsonIgnoreCondition.Never)] int? Records,
    [property: JsonIgnore(Condition = JsonIgnoreCondition.Never)] int? BatchSize,
    int PayloadBytes,
    string PayloadKind,
    int Clients,
    int ClientMachines,
    [property: JsonIgnore(Condition = JsonIgnoreCondition.Never)] double? Rate,
    string ServerWork,
    string Provider,
    string Network,
    [property: JsonIgnore(Condition = JsonIgnoreCondition.Never)] double? LatencyMs,
    string Fault,
    bool Tls = false,
    string Hosts = RunKey.OneHost,
    string HostCpus = "")
{
    /// <summary>The values a field takes when nothing set it (the targets' defaults, which a task cannot read).</summary>
    public const string NoFault = "None";
    public const string Loopback = "Loopback";
    public const string DefaultPayloadKind = "Bytes";
    public const string DefaultServerWork = "PerRecord";
    public const string DefaultProvider = "Sqlite";
    public const string OneHost = "One";

    /// <summary>Hosts of a run whose server ran on another machine (ServerMachine), its client on this one.</summary>
    public const string TwoMachines = "TwoMachines";

    /// <summary>
    /// Each field as a column id (the JSON name) and its text in a table: a file that carries the key carries every one of these.
    /// Records and batch size are empty where a row stands for every count asked for (a server that did not start, a transport not run).
    /// </summary>
    public static readonly IReadOnlyList<(string Id, Func<RunKey, string> Text)> Fields =
    [
        ("transport", k => k.Transport),
        ("kind", k => k.Kind.ToString()),
        ("records", k => Text(k.Records)),
        ("batchSize", k => Text(k.BatchSize)),
        ("payloadBytes", k => Text(k.PayloadBytes)),
        ("payloadKind", k => k.PayloadKind),
        ("clients", k => Text(k.Clients)),
        ("clientMachines", k => Text(k.ClientMachines)),
        ("rate", k => k.Rate?.ToString("R", CultureInfo.InvariantCulture) ?? ""),
        ("serverWork", k => k.ServerWork),
        ("provider", k => k.Provider),
        ("network", k => k.Network),
        ("latencyMs", k => k.LatencyMs?.ToString("R", CultureInfo.InvariantCulture) ?? ""),
        ("fault", k => k.Fault),
        ("tls", k => k.Tls ? "true" : "false"),
        ("hosts", k => k.Hosts),
        ("hostCpus", k => k.HostCpus),
    ];

    private static string Text(int? value) => value?.ToString(CultureInfo.InvariantCulture) ?? "";

    /// <summary>"1 KiB", "256 KiB", "1 MiB", "1,000 B": a payload's size as every line and table names it.</summary>
    public static string PayloadSize(int bytes) =>
        bytes >= 1 << 20 && bytes % (1 << 20) == 0 ? string.Create(CultureInfo.InvariantCulture, $"{bytes >> 20} MiB")
        : bytes >= 1 << 10 && bytes % (1 << 10) == 0 ? string.Create(CultureInfo.InvariantCulture, $"{bytes >> 10} KiB")
        : string.Create(CultureInfo.InvariantCulture, $"{bytes:N0} B");

    /// <summary>A run's kind by its transport's name, for runs recorded before they carried it.</summary>
    public static RunKind KindByName(string transport) => transport switch
    {
        "DirectCopy" => RunKind.Baseline,
        "PipelinedCopy" or "PipelinedCopyRange" => RunKind.Reference,
        _ when transport.StartsWith("Peer: ", StringComparison.Ordinal) => RunKind.Peer,
        _ => RunKind.Transport,
    };

    /// <summary>A transport's key where nothing else is known of the run (every other setting at its default).</summary>
    public static RunKey Named(string transport, int? records = null) =>
        FromProperties(new Dictionary<string, string> { ["Transport"] = transport, ["Records"] = records?.ToString(CultureInfo.InvariantCulture) ?? "" })!;

    /// <summary>A transport's key under a build's settings (its global properties), at no one record count: a run asked for and not made.</summary>
    public static RunKey Asked(string transport, IReadOnlyDictionary<string, string> settings)
    {
        var properties = settings.Where(p => p.Key is not ("Records" or "RunKind" or "Transport")).ToDictionary(p => p.Key, p => p.Value);
        properties["Transport"] = transport;
        return FromProperties(properties)!;
    }

    /// <summary>
    /// The key of the run a build's project instance is making, from its global properties (the plan's and the command line's); a
    /// setting given neither way has its default. Null outside a named transport's run.
    /// </summary>
    public static RunKey? FromProperties(IReadOnlyDictionary<string, string> given)
    {
        // MSBuild's property names are case-insensitive (-p:clients=16 sets Clients).
        var properties = new Dictionary<string, string>(given, StringComparer.OrdinalIgnoreCase);
        if (!properties.TryGetValue("Transport", out var transport) || string.IsNullOrEmpty(transport))
            return null;
        string Get(string name, string fallback) => properties.TryGetValue(name, out var v) && v.Length > 0 ? v : fallback;
        int? Number(string name) => int.TryParse(Get(name, ""), NumberStyles.Integer, CultureInfo.InvariantCulture, out var n) ? n : null;
        double? Real(string name) => double.TryParse(Get(name, ""), NumberStyles.Float, CultureInfo.InvariantCulture, out var n) ? n : null;
        var relayed = Get("Relayed", "false") == "true";
        var payloadBytes = Number("PayloadBytes") ?? 0;
        return new RunKey(transport,
            Enum.TryParse<RunKind>(Get("RunKind", ""), out var kind) ? kind : KindByName(transport),
            Number("Records"), Number("BatchSize") ?? (Number("Records") is null ? null : SettingDefaults.BatchSize),
            payloadBytes, payloadBytes > 0 ? Get("PayloadKind", DefaultPayloadKind) : "",
            Number("Clients") ?? 1, 1, Real("Rate") is > 0 and var rate ? rate : null,
            Get("ServerWork", DefaultServerWork), Get("ClientProvider", Get("Provider", DefaultProvider)),
            relayed ? Get("Network", Loopback) : Loopback, relayed ? Real("LatencyMs") : null, Get("Fault", NoFault),
            string.Equals(Get("Tls", "false"), "true", StringComparison.OrdinalIgnoreCase),
            Get("Hosts", OneHost), Get("Hosts", OneHost) == OneHost ? "" : Get("HostCpus", ""));
    }
}
