using System.Globalization;

namespace IntegrationTasks.Transfer;

/// <summary>
/// A transport as its family declares it, once, in its targets file (a TransportDefinition item), read into types: what it is (family,
/// encoding, baseline or reference), how it is run (its client and server targets and tasks, ports, relay paths, broker), what it
/// can do (one client only, a cap on records) and what it is expected to cost. The planner, the estimate, the report and the tests
/// read this; <see cref="Problems"/> refuses, before any run, a name it does not have or a value not of its type.
/// </summary>
public sealed record TransportDefinition(string Name)
{
    /// <summary>Its folder's family (Tcp, Wcf, Queues …): a name that selects all its transports.</summary>
    public string Family { get; init; } = "";
    /// <summary>The target a person types for one run of it (the series' name).</summary>
    public string ClientTarget { get; init; } = "";
    /// <summary>The client task's class, when it is not the transport's name.</summary>
    public string ClientTask { get; init; } = "";
    /// <summary>The client task's own parameters, "Name=Value;…".</summary>
    public string ClientParameters { get; init; } = "";
    public string ServerTarget { get; init; } = "";
    /// <summary>The port checked free before its server starts; 0 for none.</summary>
    public int ServerPort { get; init; }
    /// <summary>The property its server's port is given in (a planned server may be moved to another port).</summary>
    public string PortProperty { get; init; } = "";
    /// <summary>The property its client's host is given in, when it is not HostName.</summary>
    public string HostProperty { get; init; } = "";
    /// <summary>Where the relay of a simulated network forwards to: a host and port, or a Unix socket's path and the property that takes it.</summary>
    public string RelayTargetHost { get; init; } = "";
    public string RelayTargetPort { get; init; } = "";
    public string RelayPathProperty { get; init; } = "";
    public string RelayTargetPath { get; init; } = "";
    /// <summary>The server work its client asks for (Range: one read a batch); empty for the build's.</summary>
    public string ServerWork { get; init; } = "";
    public string Encoding { get; init; } = "";
    /// <summary>What a record is expected to cost before any run of it (the estimate's prior); null for the default.</summary>
    public double? PriorMicrosecondsPerRecord { get; init; }
    /// <summary>In the Quick profile.</summary>
    public bool Quick { get; init; }
    /// <summary>The series' own baseline (ranked with the transports).</summary>
    public bool Baseline { get; init; }
    /// <summary>A no-transport reference that the transports' times are divided by (not ranked).</summary>
    public bool Reference { get; init; }
    /// <summary>Runs with one client only (many clients are left out of its plan).</summary>
    public bool OneClient { get; init; }
    /// <summary>Needs a broker, <see cref="Broker"/>, that the build starts or finds.</summary>
    public bool NeedsBroker { get; init; }
    public string Broker { get; init; } = "";
    /// <summary>The most records RunAll runs it at (one call per record); null for no cap.</summary>
    public int? MaxRecords { get; init; }
    /// <summary>The property that lifts <see cref="MaxRecords"/>.</summary>
    public string MaxRecordsProperty { get; init; } = "";
    /// <summary>Carries its traffic over TLS when the build says Tls=true (else it is listed as not run then).</summary>
    public bool Tls { get; init; }

    /// <summary>Why no TLS could carry it, and what protects it instead (said where Tls=true leaves it out); empty: it may yet.</summary>
    public string NotEncryptable { get; init; } = "";

    /// <summary>Why its two sides must share one machine (said where ServerMachine leaves it out); empty: its server may run on another.</summary>
    public string OneMachine { get; init; } = "";

    /// <summary>Its server can take only clients with a certificate of the suite's authority (ClientCertificates=true); else it is left out then.</summary>
    public bool ClientCertificates { get; init; } = true;

    /// <summary>
    /// What its server needs to listen beyond loopback, where nothing listens without a credential: ClientCertificates (Tls=true with
    /// ClientCertificates=true: its protocol has no credential of its own), Never (none the suite sets up), or empty (it carries its own).
    /// </summary>
    public string BeyondLoopback { get; init; } = "";

    private delegate TransportDefinition Reader(TransportDefinition definition, string value);

    private static readonly IReadOnlyDictionary<string, Reader> Readers = new Dictionary<string, Reader>(StringComparer.Ordinal)
    {
        [nameof(Family)] = (d, v) => d with { Family = v },
        [nameof(ClientTarget)] = (d, v) => d with { ClientTarget = v },
        [nameof(ClientTask)] = (d, v) => d with { ClientTask = v },
        [nameof(ClientParameters)] = (d, v) => d with { ClientParameters = v },
        [nameof(ServerTarget)] = (d, v) => d with { ServerTarget = v },
        [nameof(ServerPort)] = (d, v) => d with { ServerPort = Whole(v) ?? 0 },
        [nameof(PortProperty)] = (d, v) => d with { PortProperty = v },
        [nameof(HostProperty)] = (d, v) => d with { HostProperty = v },
        [nameof(RelayTargetHost)] = (d, v) => d with { RelayTargetHost = v },
        [nameof(RelayTargetPort)] = (d, v) => d with { RelayTargetPort = v },
        [nameof(RelayPathProperty)] = (d, v) => d with { RelayPathProperty = v },
        [nameof(RelayTargetPath)] = (d, v) => d with { RelayTargetPath = v },
        [nameof(ServerWork)] = (d, v) => d with { ServerWork = v },
        [nameof(Encoding)] = (d, v) => d with { Encoding = v },
        [nameof(PriorMicrosecondsPerRecord)] = (d, v) => d with { PriorMicrosecondsPerRecord = v.Length == 0 ? null : double.Parse(v, NumberStyles.Float, CultureInfo.InvariantCulture) },
        [nameof(Quick)] = (d, v) => d with { Quick = Flag(v) },
        [nameof(Baseline)] = (d, v) => d with { Baseline = Flag(v) },
        [nameof(Reference)] = (d, v) => d with { Reference = Flag(v) },
        [nameof(OneClient)] = (d, v) => d with { OneClient = Flag(v) },
        [nameof(NeedsBroker)] = (d, v) => d with { NeedsBroker = Flag(v) },
        [nameof(Broker)] = (d, v) => d with { Broker = v },
        [nameof(MaxRecords)] = (d, v) => d with { MaxRecords = Whole(v) },
        [nameof(MaxRecordsProperty)] = (d, v) => d with { MaxRecordsProperty = v },
        [nameof(Tls)] = (d, v) => d with { Tls = Flag(v) },
        [nameof(NotEncryptable)] = (d, v) => d with { NotEncryptable = v },
        [nameof(OneMachine)] = (d, v) => d with { OneMachine = v },
        [nameof(ClientCertificates)] = (d, v) => d with { ClientCertificates = v.Length == 0 || bool.Parse(v) },
        [nameof(BeyondLoopback)] = (d, v) => v is "" or "ClientCertificates" or "Never" ? d with { BeyondLoopback = v }
            : throw new FormatException("BeyondLoopback is ClientCertificates, Never or empty."),
    };

    /// <summary>The names a definition may declare: the orchestration reads nothing else, so another is a misspelling.</summary>
    public static IReadOnlySet<string> Vocabulary { get; } = Readers.Keys.ToHashSet(StringComparer.Ordinal);

    /// <summary>What an ExternalTransport item declares besides (targets/ExternalTransports.targets): it rides along on its definition.</summary>
    public static IReadOnlySet<string> ExternalVocabulary { get; } =
        new HashSet<string>(["Project", "Assembly", "Port", "Settings", "TransportName", "AssemblyPath"], StringComparer.Ordinal);

    private static bool Flag(string value) => value.Length > 0 && bool.Parse(value);

    private static int? Whole(string value) => value.Length == 0 ? null : int.Parse(value, NumberStyles.None, CultureInfo.InvariantCulture);

    /// <summary>
    /// The definition an item declares. Metadata outside the vocabulary is passed over here (RunAll's plan items add their own: record
    /// counts, kind); a value not of its type is IT1001 naming the transport and the name.
    /// </summary>
    public static TransportDefinition From(ITaskItem item)
    {
        var definition = new TransportDefinition(item.ItemSpec);
        foreach (var (name, read) in Readers)
        {
            var value = item.GetMetadata(name).Trim();
            try
            {
                definition = read(definition, value);
            }
            catch (Exception e) when (e is FormatException or OverflowException)
            {
                throw new IntegrationException(ErrorCodes.InvalidParameter, $"TransportDefinition {item.ItemSpec}'s {name} cannot be '{value}': {e.Message}");
            }
        }
        return definition;
    }

    /// <summary>Each definition that declares a name outside the vocabulary or a value not of its type, as a problem; none when all read.</summary>
    public static IEnumerable<string> Problems(IEnumerable<ITaskItem> items)
    {
        // An ExternalTransport named like a built-in (or like another) would make two definitions, and RunClient would run both.
        foreach (var twice in items.GroupBy(i => i.ItemSpec, StringComparer.Ordinal).Where(g => g.Count() > 1))
            yield return $"TransportDefinition {twice.Key} is defined {twice.Count()} times: each transport needs a name of its own (an ExternalTransport named like another?).";
        foreach (var item in items)
        {
            var external = item.GetMetadata("ClientTask") == nameof(ExternalClient);
            var unknown = item.CloneCustomMetadata().Keys.Cast<string>()
                .Where(name => !Vocabulary.Contains(name) && !(external && ExternalVocabulary.Contains(name))).Order(StringComparer.Ordinal).ToList();
            if (unknown.Count > 0)
                yield return $"TransportDefinition {item.ItemSpec} declares {string.Join(", ", unknown)}, which nothing reads (known: {string.Join(", ", Vocabulary.Order(StringComparer.Ordinal))}).";
            string? problem = null;
            try
            {
                From(item);
            }
            catch (IntegrationException e)
            {
                problem = e.Message;
            }
            if (problem is not null)
                yield return problem;
        }
    }
}
