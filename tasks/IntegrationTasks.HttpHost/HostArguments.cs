using System.Globalization;

namespace IntegrationTasks.HttpHost;

internal sealed record HostArguments(string Url, string Provider, string ConnString, long MaxRequestBytes, bool StopOnStdinClose, string? StatsFile)
{
    /// <summary>ThreadPoolStarvation lab: the PostgreSQL its two endpoints wait in (500 ms of pg_sleep each).</summary>
    public string? StarvationConnString { get; init; }

    /// <summary>The thread pool's minimum (the mitigation a reader would try); 0 leaves the runtime's default.</summary>
    public int MinThreads { get; init; }

    /// <summary>Where to append the runtime counters once a second (JSON lines).</summary>
    public string? CountersFile { get; init; }
}

internal static class HostArgumentParser
{
    public static HostArguments Parse(string[] args)
    {
        var values = new Dictionary<string, string>(StringComparer.Ordinal);
        var flags = new HashSet<string>(StringComparer.Ordinal);
        for (var i = 0; i < args.Length; i++)
        {
            if (args[i] == "--stop-on-stdin-close")
                flags.Add(args[i]);
            else if (args[i].StartsWith("--", StringComparison.Ordinal) && i + 1 < args.Length)
                values[args[i]] = args[++i];
            else
                throw new ArgumentException($"Unexpected argument '{args[i]}'.");
        }
        return new HostArguments(
            values.GetValueOrDefault("--url", "http://127.0.0.1:8082"),
            values.GetValueOrDefault("--provider", "Sqlite"),
            values.GetValueOrDefault("--connstring") ?? throw new ArgumentException("--connstring is required."),
            long.Parse(values.GetValueOrDefault("--max-request-bytes", "33554432"), CultureInfo.InvariantCulture),
            flags.Contains("--stop-on-stdin-close"),
            values.GetValueOrDefault("--stats-file"))
        {
            StarvationConnString = values.GetValueOrDefault("--starvation-connstring"),
            MinThreads = int.Parse(values.GetValueOrDefault("--min-threads", "0"), CultureInfo.InvariantCulture),
            CountersFile = values.GetValueOrDefault("--counters-file"),
        };
    }
}
