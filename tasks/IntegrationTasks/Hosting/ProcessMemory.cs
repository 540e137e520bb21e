using System.Globalization;

namespace IntegrationTasks.Hosting;

/// <summary>
/// Peak resident memory from Linux's /proc: VmHWM is the high-water mark, and writing "5" to
/// clear_refs resets it, so a peak can be measured per repetition of a long-lived process.
/// </summary>
public static class ProcessMemory
{
    public static long? PeakBytes(int processId) => ReadStatusKiB(processId, "VmHWM:") * 1024;

    public static long? PeakBytes() => PeakBytes(Environment.ProcessId);

    /// <summary>Resident memory now (VmRSS).</summary>
    public static long? ResidentBytes() => ReadStatusKiB(Environment.ProcessId, "VmRSS:") * 1024;

    /// <summary>
    /// The peaks of a process and all its descendants, summed (an upper bound of their joint peak):
    /// a server task that hosts its server in a child process (HttpServer) is measured with it.
    /// </summary>
    public static long? PeakBytesOfTree(int processId)
    {
        long total = 0;
        var any = false;
        foreach (var pid in ProcessTree.Of(processId))
        {
            if (PeakBytes(pid) is { } peak)
            {
                total += peak;
                any = true;
            }
        }
        return any ? total : null;
    }

    public static void ResetPeakOfTree(int processId)
    {
        foreach (var pid in ProcessTree.Of(processId))
            ResetPeak(pid);
    }

    /// <summary>
    /// CPU time (user + system) used so far by a process and its descendants, from /proc/*/stat; with
    /// <paramref name="withReapedChildren"/> also that of the children each has waited for (cutime, cstime: a broker's fork that came
    /// and went between two readings, such as Redis's rewrite of its append-only file).
    /// </summary>
    public static double? CpuSecondsOfTree(int processId, bool withReapedChildren = false)
    {
        double total = 0;
        var any = false;
        foreach (var pid in ProcessTree.Of(processId))
        {
            try
            {
                var stat = File.ReadAllText($"/proc/{pid}/stat");
                var fields = stat[(stat.LastIndexOf(')') + 2)..].Split(' ');
                // utime and stime are fields 14 and 15 of stat(5): here 11 and 12 after the command name.
                total += (long.Parse(fields[11], CultureInfo.InvariantCulture) + long.Parse(fields[12], CultureInfo.InvariantCulture)) / ClockTicksPerSecond;
                if (withReapedChildren)
                    total += (long.Parse(fields[13], CultureInfo.InvariantCulture) + long.Parse(fields[14], CultureInfo.InvariantCulture)) / ClockTicksPerSecond;
                any = true;
            }
            catch (Exception e) when (e is IOException or UnauthorizedAccessException or FormatException or IndexOutOfRangeException)
            {
            }
        }
        return any ? total : null;
    }

    /// <summary>USER_HZ: 100 on every Linux this suite targets (sysconf(_SC_CLK_TCK)).</summary>
    private const double ClockTicksPerSecond = 100;

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

    /// <summary>
    /// Returns to the system what glibc keeps of freed native memory: it holds freed blocks in its arenas (one per thread that
    /// allocated, up to eight a core), so SQLite's copies of large rows, freed long ago, stayed resident in the process. False where
    /// there is no glibc to ask.
    /// </summary>
    public static bool TrimNativeHeap()
    {
        if (!OperatingSystem.IsLinux())
            return false;
        try
        {
            MallocTrim(0); // 1 if it released something, 0 if there was nothing to release
            return true;
        }
        catch (Exception e) when (e is DllNotFoundException or EntryPointNotFoundException)
        {
            return false;
        }
    }

    [System.Runtime.InteropServices.DllImport("libc", EntryPoint = "malloc_trim")]
    private static extern int MallocTrim(nuint pad);

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
