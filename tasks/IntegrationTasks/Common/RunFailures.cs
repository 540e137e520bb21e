using System.Text.Json;

namespace IntegrationTasks.Common;

/// <summary>A transport's run that failed: what was asked for and the coded error it ended with.</summary>
public sealed record RunFailure(string Transport, string RecordCounts, int? Records, string Code, string Message)
{
    /// <summary>The run that failed, as far as its build knew it (null in logs from before it was recorded).</summary>
    public RunKey? Key { get; init; }

    public DateTimeOffset Timestamp { get; init; } = DateTimeOffset.UtcNow;
}

/// <summary>
/// Every coded error logged inside a RunAll transport's runs, one JSON line each, so that the report can name what failed and why
/// (a server that could not start leaves no measurement behind). RunAll names the file in the global property
/// <see cref="FileProperty"/>; the tasks below it find it, with the transport and record counts, in their build's global properties.
/// </summary>
public static class RunFailures
{
    public const string FileProperty = "RunFailureLog";

    public static void Append(IReadOnlyDictionary<string, string> globalProperties, string code, string message)
    {
        if (!globalProperties.TryGetValue(FileProperty, out var path) || string.IsNullOrEmpty(path)
            || !globalProperties.TryGetValue("Transport", out var transport) || string.IsNullOrEmpty(transport))
            return;
        globalProperties.TryGetValue("RecordCounts", out var counts);
        int? records = globalProperties.TryGetValue("Records", out var r) && int.TryParse(r, System.Globalization.CultureInfo.InvariantCulture, out var n) ? n : null;
        var failure = new RunFailure(transport, counts ?? "", records, code, message) { Key = RunKey.FromProperties(globalProperties) };
        try
        {
            Directory.CreateDirectory(Path.GetDirectoryName(Path.GetFullPath(path))!);
            File.AppendAllText(path, JsonSerializer.Serialize(failure, JsonFiles.Options) + "\n");
        }
        catch (IOException)
        {
            // The error itself is logged either way; the report then only misses its reason.
        }
    }

    public static List<RunFailure> Read(string? path) =>
        string.IsNullOrEmpty(path) || !File.Exists(path)
            ? []
            : File.ReadLines(path).Where(l => l.Trim().Length > 0).Select(l => JsonSerializer.Deserialize<RunFailure>(l, JsonFiles.Options)!).ToList();
}
