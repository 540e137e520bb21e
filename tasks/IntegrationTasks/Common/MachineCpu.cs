using System.Globalization;

namespace IntegrationTasks.Common;

/// <summary>
/// The machine's CPU accounting from Linux's /proc/stat: here, the time its hypervisor ran something else while the guest's CPUs
/// had work ("steal"). That time is charged to no process, so a run slowed by it spends the same CPU and only waits longer.
/// </summary>
public static class MachineCpu
{
    /// <summary>/proc/stat counts in USER_HZ, which Linux fixes at 100 a second for every architecture.</summary>
    private const double TicksPerSecond = 100;

    /// <summary>Steal summed over the machine's CPUs since it started, in seconds; null where /proc/stat is not there or not read.</summary>
    public static double? StealSeconds(string statFile = "/proc/stat")
    {
        try
        {
            using var reader = new StreamReader(statFile);
            return ParseSteal(reader.ReadLine());
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            return null;
        }
    }

    /// <summary>
    /// The steal of /proc/stat's first line: "cpu user nice system idle iowait irq softirq steal …", the eighth figure; null where
    /// the line is not that (a kernel before 2.6.11 has no steal).
    /// </summary>
    internal static double? ParseSteal(string? line)
    {
        var fields = line?.Split(' ', StringSplitOptions.RemoveEmptyEntries);
        return fields is { Length: > 8 } && fields[0] == "cpu"
               && long.TryParse(fields[8], NumberStyles.None, CultureInfo.InvariantCulture, out var ticks)
            ? ticks / TicksPerSecond
            : null;
    }
}
