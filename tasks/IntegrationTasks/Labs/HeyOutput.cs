using System.Globalization;
using System.Text.RegularExpressions;

namespace IntegrationTasks.Labs;

/// <summary>What `hey` prints at the end of a load run, as numbers.</summary>
public sealed partial record HeyOutput(double TotalSeconds, double RequestsPerSecond, double AverageSeconds, double FastestSeconds,
    double SlowestSeconds, IReadOnlyDictionary<int, double> Percentiles, IReadOnlyDictionary<int, int> StatusCodes)
{
    [GeneratedRegex(@"^\s*(?<name>Total|Slowest|Fastest|Average|Requests/sec):\s+(?<value>[0-9.]+)", RegexOptions.Multiline)]
    private static partial Regex Summary();

    [GeneratedRegex(@"^\s*(?<p>\d+)%+ in (?<value>[0-9.]+) secs", RegexOptions.Multiline)]
    private static partial Regex Percentile();

    [GeneratedRegex(@"^\s*\[(?<code>\d{3})\]\s+(?<count>\d+) responses", RegexOptions.Multiline)]
    private static partial Regex Status();

    public static HeyOutput Parse(string text)
    {
        var summary = Summary().Matches(text).ToDictionary(m => m.Groups["name"].Value, m => Number(m.Groups["value"].Value));
        foreach (var name in new[] { "Total", "Requests/sec", "Average", "Fastest", "Slowest" })
        {
            if (!summary.ContainsKey(name))
                throw new IntegrationException(ErrorCodes.InvalidFieldValue, $"hey's output has no '{name}:' line; was the load run cut short?");
        }
        return new HeyOutput(summary["Total"], summary["Requests/sec"], summary["Average"], summary["Fastest"], summary["Slowest"],
            ReadPercentiles(text),
            Status().Matches(text).ToDictionary(m => int.Parse(m.Groups["code"].Value, CultureInfo.InvariantCulture),
                m => int.Parse(m.Groups["count"].Value, CultureInfo.InvariantCulture)));
    }

    /// <summary>With fewer requests than percentiles, hey pads the list with "0% in 0.0000 secs" lines: those are not measurements.</summary>
    private static Dictionary<int, double> ReadPercentiles(string text)
    {
        var percentiles = new Dictionary<int, double>();
        foreach (Match match in Percentile().Matches(text))
        {
            var p = int.Parse(match.Groups["p"].Value, CultureInfo.InvariantCulture);
            if (p > 0)
                percentiles.TryAdd(p, Number(match.Groups["value"].Value));
        }
        return percentiles;
    }

    private static double Number(string text) => double.Parse(text, CultureInfo.InvariantCulture);
}
