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
            try
            {
                // Fields after the command name, which is in parentheses and may hold spaces: state, ppid, …
                var stat = File.ReadAllText(Path.Combine(dir, "stat"));
                var fields = stat[(stat.LastIndexOf(')') + 2)..].Split(' ');
                var parent = int.Parse(fields[1], CultureInfo.InvariantCulture);
                if (!children.TryGetValue(parent, out var list))
                    children[parent] = list = [];
                list.Add(pid);
            }
            catch (Exception e) when (e is IOException or UnauthorizedAccessException or FormatException or IndexOutOfRangeException)
            {
            }
        }
        var tree = new List<int> { root };
        for (var i = 0; i < tree.Count; i++)
            tree.AddRange(children.GetValueOrDefault(tree[i]) ?? []);
        return tree;
    }

    /// <summary>Sends a signal (kill(2)); false where there are none (Windows) or the process is gone.</summary>
    public static bool Signal(int processId, int signal) =>
        (OperatingSystem.IsLinux() || OperatingSystem.IsMacOS()) && SendSignal(processId, signal) == 0;

    [DllImport("libc", EntryPoint = "kill", SetLastError = true)]
    private static extern int SendSignal(int pid, int signal);
}
