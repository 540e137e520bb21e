namespace IntegrationTasks.Tests;

internal static class Processes
{
    /// <summary>Every process's command line, to find what a test's code left running.</summary>
    public static string AllCommandLines() => string.Join("\n", Directory.EnumerateDirectories("/proc")
        .Where(d => int.TryParse(Path.GetFileName(d), out _))
        .Select(d => { try { return File.ReadAllText(Path.Combine(d, "cmdline")).Replace('\0', ' '); } catch (IOException) { return ""; } }));
}
