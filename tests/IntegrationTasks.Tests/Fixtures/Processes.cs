namespace IntegrationTasks.Tests;

internal static class Processes
{
    /// <summary>Every process's command line, to find what a test's code left running.</summary>
    public static string AllCommandLines() => string.Join("\n", CommandLines());

    /// <summary>Each process's command line, its words joined by spaces (one that ended meanwhile is left out).</summary>
    public static IEnumerable<string> CommandLines() => Directory.EnumerateDirectories("/proc")
        .Where(d => int.TryParse(Path.GetFileName(d), out _))
        .Select(d =>
        {
            try
            {
                return File.ReadAllText(Path.Combine(d, "cmdline")).Replace('\0', ' ');
            }
            catch (Exception e) when (e is IOException or UnauthorizedAccessException)
            {
                return "";
            }
        });
}

/// <summary>The client processes a build started (the suite's host in its client mode), found by their run file under the build's artifacts.</summary>
internal static class ClientProcesses
{
    public static IReadOnlyList<int> Of(string artifacts) =>
    [
        .. Directory.EnumerateDirectories("/proc").Select(d => (Pid: int.TryParse(Path.GetFileName(d), out var pid) ? pid : 0, Dir: d)).Where(p => p.Pid > 0)
            .Where(p =>
            {
                try
                {
                    var words = File.ReadAllText(Path.Combine(p.Dir, "cmdline")).Split('\0');
                    return words.Any(w => w.EndsWith("IntegrationTasks.Host.dll", StringComparison.Ordinal)) && words.Contains(ClientHost.Verb)
                        && words.Any(w => w.StartsWith(artifacts, StringComparison.Ordinal));
                }
                catch (IOException)
                {
                    return false;
                }
            })
            .Select(p => p.Pid),
    ];

    public static bool IsRunning(int pid)
    {
        try
        {
            return !File.ReadAllText($"/proc/{pid}/stat").Contains(") Z ", StringComparison.Ordinal);
        }
        catch (IOException)
        {
            return false; // gone (DirectoryNotFoundException, FileNotFoundException), or going
        }
    }
}
