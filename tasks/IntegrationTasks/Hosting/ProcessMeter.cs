using System.Globalization;

namespace IntegrationTasks.Hosting;

/// <summary>What a process and its descendants used over an interval, from /proc; null where a reading failed (it ended, or was started again).</summary>
public sealed record ProcessUse(double? CpuSeconds, long? PeakBytes, long? StorageWriteBytes);

/// <summary>
/// Meters another process tree (a broker the transfer goes through) from a start to a stop: its CPU (its reaped children's too, as
/// the kernel counts their bytes written in their parent's), the bytes it sent to storage
/// (/proc/*/io write_bytes: its page-cache writes count when they are dirtied, whether fsync'd at once or written back later) and its
/// peak resident memory, the peak reset at the start.
/// </summary>
public sealed class ProcessMeter
{
    private readonly int _processId;
    private readonly double? _cpuAtStart;
    private readonly long? _writtenAtStart;

    private ProcessMeter(int processId)
    {
        _processId = processId;
        ProcessMemory.ResetPeakOfTree(processId);
        _cpuAtStart = ProcessMemory.CpuSecondsOfTree(processId, withReapedChildren: true);
        _writtenAtStart = StorageWriteBytesOfTree(processId);
    }

    /// <summary>A meter started now; null for no process (0 or less).</summary>
    public static ProcessMeter? Start(int processId) => processId > 0 ? new ProcessMeter(processId) : null;

    public ProcessUse Stop()
    {
        var cpu = ProcessMemory.CpuSecondsOfTree(_processId, withReapedChildren: true);
        var written = StorageWriteBytesOfTree(_processId);
        return new ProcessUse(
            cpu is { } end && _cpuAtStart is { } start && end >= start ? end - start : null,
            ProcessMemory.PeakBytesOfTree(_processId),
            written is { } after && _writtenAtStart is { } before && after >= before ? after - before : null);
    }

    /// <summary>The bytes a process tree has caused to be sent to storage so far (write_bytes of /proc/*/io); null where unreadable.</summary>
    public static long? StorageWriteBytesOfTree(int processId)
    {
        long total = 0;
        var any = false;
        foreach (var pid in ProcessTree.Of(processId))
        {
            try
            {
                foreach (var line in File.ReadLines($"/proc/{pid}/io"))
                {
                    if (!line.StartsWith("write_bytes:", StringComparison.Ordinal))
                        continue;
                    total += long.Parse(line["write_bytes:".Length..].Trim(), CultureInfo.InvariantCulture);
                    any = true;
                }
            }
            catch (Exception e) when (e is IOException or UnauthorizedAccessException or FormatException)
            {
            }
        }
        return any ? total : null;
    }
}
