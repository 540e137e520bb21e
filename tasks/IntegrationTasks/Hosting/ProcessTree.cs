using System.Globalization;
using System.Runtime.InteropServices;

namespace IntegrationTasks.Hosting;

/// <summary>Processes as Linux's /proc shows them: a process's descendants, and a POSIX signal sent to one.</summary>
public static class ProcessTree
{
    public const int SigInt = 2;
    public const int SigTerm = 15;

    /// <summary>The process and its descendants, from the parent ids in /proc/*/stat.</summary>
    public static List<int> Of(int root)
    {
        var children = new Dictionary<int, List<int>>();
        foreach (var dir in Directory.EnumerateDirectories("/proc"))
        {
            if (!int.TryParse(Path.GetFileName(dir), out var pid))
                continue;
            if (ParentOf(dir) is not { } parent)
                continue;
            if (!children.TryGetValue(parent, out var list))
                children[parent] = list = [];
            list.Add(pid);
        }
        var tree = new List<int> { root };
        for (var i = 0; i < tree.Count; i++)
            tree.AddRange(children.GetValueOrDefault(tree[i]) ?? []);
        return tree;
    }

    /// <summary>The parent's id of the process whose /proc folder is <paramref name="procDirectory"/> ("/proc/self" for this one); null when it cannot be read.</summary>
    public static int? ParentOf(string procDirectory)
    {
        try
        {
            // Fields after the command name, which is in parentheses and may hold spaces: state, ppid, …
            var stat = File.ReadAllText(Path.Combine(procDirectory, "stat"));
            return int.Parse(stat[(stat.LastIndexOf(')') + 2)..].Split(' ')[1], CultureInfo.InvariantCulture);
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException or FormatException or IndexOutOfRangeException or ArgumentOutOfRangeException)
        {
            return null;
        }
    }

    /// <summary>Sends a signal (kill(2)); false where there are none (Windows) or the process is gone.</summary>
    public static bool Signal(int processId, int signal) =>
        (OperatingSystem.IsLinux() || OperatingSystem.IsMacOS()) && SendSignal(processId, signal) == 0;

    [DllImport("libc", EntryPoint = "kill", SetLastError = true)]
    private static extern int SendSignal(int pid, int signal);
}
