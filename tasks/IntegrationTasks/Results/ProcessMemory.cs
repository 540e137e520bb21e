using System.Globalization;

namespace IntegrationTasks.Results;

/// <summary>
/// Peak resident memory from Linux's /proc: VmHWM is the high-water mark, and writing "5" to
/// clear_refs resets it, so a peak can be measured per repetition of a long-lived process.
/// </summary>
public static class ProcessMemory
{
    public static long? PeakBytes(int processId) => ReadStatusKiB(processId, "VmHWM:") * 1024;

    public static long? PeakBytes() => PeakBytes(Environment.ProcessId);

    public static bool ResetPeak(int processId)
    {
        try
        {
            File.WriteAllText($"/proc/{processId}/clear_refs", "5");
            return true;
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            return false;
        }
    }

    public static bool ResetPeak() => ResetPeak(Environment.ProcessId);

    private static long? ReadStatusKiB(int processId, string field)
    {
        try
        {
            foreach (var line in File.ReadLines($"/proc/{processId}/status"))
            {
                if (!line.StartsWith(field, StringComparison.Ordinal))
                    continue;
                var number = line[field.Length..].Trim().Split(' ')[0];
                return long.Parse(number, CultureInfo.InvariantCulture);
            }
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException or FormatException)
        {
        }
        return null;
    }
}
