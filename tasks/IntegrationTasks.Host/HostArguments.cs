using System.Globalization;

namespace IntegrationTasks.Host;

/// <summary>The host's command line: --name value pairs, flags, and one or more --module names.</summary>
internal sealed class HostArguments
{
    private readonly Dictionary<string, string> _values = new(StringComparer.Ordinal);
    private readonly HashSet<string> _flags = new(StringComparer.Ordinal);

    public List<string> Modules { get; } = [];

    public string Url => Value("--url") ?? "http://127.0.0.1:8082";
    public bool StopOnStdinClose => _flags.Contains("--stop-on-stdin-close");

    /// <summary>Mutual TLS: clients must present a certificate from the --tls-folder's authority.</summary>
    public bool ClientCertificates => _flags.Contains("--client-certificates");
    public string? StatsFile => Value("--stats-file");

    public string? Value(string name) => _values.GetValueOrDefault(name);

    public string Required(string name) => Value(name) ?? throw new ArgumentException($"{name} is required.");

    public long Number(string name, long fallback) =>
        Value(name) is { } text ? long.Parse(text, NumberStyles.None, CultureInfo.InvariantCulture) : fallback;

    /// <summary>
    /// The database's connection string: from the environment the suite starts the host with (only the host's owner reads it), or
    /// --connstring when a person starts it by hand.
    /// </summary>
    public string ConnectionString(string argument)
    {
        var variable = IntegrationTasks.Hosting.ServerSignals.ConnectionStringVariable;
        if (Value(argument) is { } given)
            return given;
        return Environment.GetEnvironmentVariable(variable) is { Length: > 0 } inherited ? inherited
            : throw new ArgumentException($"{argument} (or the {variable} environment variable) is required.");
    }

    /// <summary>The server database a module answers from (--provider, the connection string), its schema ensured, read as --server-work says.</summary>
    public async Task<IntegrationTasks.Data.RecordSource> OpenRecordSourceAsync(CancellationToken cancellationToken)
    {
        var work = IntegrationTasks.Data.ServerWorks.Parse(Value("--server-work"));
        var database = IntegrationTasks.Data.Database.Create(Value("--provider") ?? "Sqlite", ConnectionString("--connstring"));
        await database.EnsureSchemaAsync(cancellationToken);
        return new IntegrationTasks.Data.RecordSource(database, work);
    }

    public static HostArguments Parse(string[] args)
    {
        var parsed = new HostArguments();
        for (var i = 0; i < args.Length; i++)
        {
            if (args[i] is "--stop-on-stdin-close" or "--client-certificates")
                parsed._flags.Add(args[i]);
            else if (args[i] == "--module" && i + 1 < args.Length)
                parsed.Modules.Add(args[++i]);
            else if (args[i].StartsWith("--", StringComparison.Ordinal) && i + 1 < args.Length)
                parsed._values[args[i]] = args[++i];
            else
                throw new ArgumentException($"Unexpected argument '{args[i]}'.");
        }
        return parsed;
    }
}
