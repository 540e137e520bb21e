using System.Globalization;

namespace IntegrationTasks.Hosting;

/// <summary>
/// How many TCP connections clients hold open to this process right now, read from Linux's /proc: the established sockets
/// this process owns whose local port is one it listens on (so its own connections out — to PostgreSQL, to a broker — are
/// not counted). Any server of the suite, whatever its transport or framework, is counted the same way. Null off Linux.
/// </summary>
public static class OpenConnections
{
    private const string Established = "01";
    private const string Listening = "0A";

    public static int? Count()
    {
        if (!OperatingSystem.IsLinux())
            return null;
        try
        {
            var ours = OwnSocketInodes();
            var sockets = new List<(int LocalPort, string State, long Inode)>();
            foreach (var table in new[] { "/proc/self/net/tcp", "/proc/self/net/tcp6" })
            {
                if (File.Exists(table))
                    sockets.AddRange(File.ReadLines(table).Skip(1).Select(Parse).OfType<(int, string, long)>().Where(s => ours.Contains(s.Item3)));
            }
            var listening = sockets.Where(s => s.State == Listening).Select(s => s.LocalPort).ToHashSet();
            return sockets.Count(s => s.State == Established && listening.Contains(s.LocalPort));
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            return null;
        }
    }

    /// <summary>The inodes of this process's sockets (its descriptors link to "socket:[inode]").</summary>
    private static HashSet<long> OwnSocketInodes()
    {
        var inodes = new HashSet<long>();
        foreach (var descriptor in Directory.EnumerateFileSystemEntries("/proc/self/fd"))
        {
            var target = new FileInfo(descriptor).LinkTarget;
            if (target is not null && target.StartsWith("socket:[", StringComparison.Ordinal)
                && long.TryParse(target.AsSpan(8, target.Length - 9), NumberStyles.None, CultureInfo.InvariantCulture, out var inode))
                inodes.Add(inode);
        }
        return inodes;
    }

    /// <summary>"  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode".</summary>
    private static (int LocalPort, string State, long Inode)? Parse(string line)
    {
        var fields = line.Split(' ', StringSplitOptions.RemoveEmptyEntries);
        if (fields.Length < 10)
            return null;
        var local = fields[1];
        var colon = local.LastIndexOf(':');
        return colon > 0 && int.TryParse(local.AsSpan(colon + 1), NumberStyles.HexNumber, CultureInfo.InvariantCulture, out var port)
            && long.TryParse(fields[9], NumberStyles.None, CultureInfo.InvariantCulture, out var inode)
            ? (port, fields[3], inode) : null;
    }
}
