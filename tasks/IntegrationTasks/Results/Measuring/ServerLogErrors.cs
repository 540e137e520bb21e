using System.Globalization;
using System.Text.RegularExpressions;

namespace IntegrationTasks.Results;

/// <summary>
/// The coded warnings and errors a server logged during one repetition, counted by code (IT1003 × 86): under load a server
/// refuses, drops and fails things that the client may survive (it resumes), and these counts keep them from being hidden.
/// Reads the server's log from where the previous repetition's reading stopped (its <see cref="LogPosition"/>, kept by <see cref="RunState"/>).
/// </summary>
public static partial class ServerLogErrors
{
    [GeneratedRegex(@"\b(?:warning|error) (IT\d{4}):")]
    private static partial Regex Coded();

    /// <summary>Counts by code in the log's lines written since the last call for the same log; null when there is no log.</summary>
    public static SortedDictionary<string, int>? SinceLastReading(string logFile, LogPosition position)
    {
        if (!File.Exists(logFile))
            return null;
        var offset = position.Path == Path.GetFullPath(logFile) ? position.Offset : 0;
        using var stream = new FileStream(logFile, FileMode.Open, FileAccess.Read, FileShare.ReadWrite | FileShare.Delete);
        if (offset > stream.Length)
            offset = 0; // a new log (the server was started again)
        stream.Position = offset;
        var counts = new SortedDictionary<string, int>(StringComparer.Ordinal);
        using (var reader = new StreamReader(stream, leaveOpen: true))
        {
            while (reader.ReadLine() is { } line)
            {
                foreach (Match match in Coded().Matches(line))
                    counts[match.Groups[1].Value] = counts.GetValueOrDefault(match.Groups[1].Value) + 1;
            }
        }
        (position.Path, position.Offset) = (Path.GetFullPath(logFile), stream.Length);
        return counts;
    }

    /// <summary>"IT1003 × 86, IT3007 × 2", or "–" for none.</summary>
    public static string Describe(IReadOnlyDictionary<string, int>? counts) =>
        counts is { Count: > 0 } ? string.Join(", ", counts.OrderByDescending(c => c.Value).Select(c => string.Create(CultureInfo.InvariantCulture, $"{c.Key} × {c.Value:N0}"))) : "–";
}
