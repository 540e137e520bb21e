namespace IntegrationTasks.Tests;

internal static class RepositoryPaths
{
    public static string Root { get; } = FindRoot();

    public static string BuildProject => Path.Combine(Root, "build.proj");

    private static string FindRoot()
    {
        for (var dir = new DirectoryInfo(AppContext.BaseDirectory); dir is not null; dir = dir.Parent)
        {
            if (File.Exists(Path.Combine(dir.FullName, "build.proj")))
                return dir.FullName;
        }
        throw new InvalidOperationException("build.proj not found above the test assembly.");
    }

    public static string RunScript(string script, string argument)
    {
        var (exitCode, stdout, stderr) = Run("bash", [Path.Combine(Root, script), argument]);
        if (exitCode != 0)
            throw new InvalidOperationException($"{script} {argument} failed ({exitCode}): {stderr}");
        return stdout;
    }

    /// <summary>Runs a command from the repository root (or <paramref name="workingDirectory"/>); five minutes at most, then its tree is killed.</summary>
    public static (int ExitCode, string Stdout, string Stderr) Run(string fileName, IEnumerable<string> arguments,
        IReadOnlyDictionary<string, string?>? environment = null, string? workingDirectory = null)
    {
        var info = new ProcessStartInfo(fileName) { RedirectStandardOutput = true, RedirectStandardError = true, WorkingDirectory = workingDirectory ?? Root };
        foreach (var argument in arguments)
            info.ArgumentList.Add(argument);
        foreach (var (name, value) in environment ?? new Dictionary<string, string?>())
        {
            if (value is null)
                info.Environment.Remove(name); // not inherited
            else
                info.Environment[name] = value;
        }
        using var process = Process.Start(info)!;
        var stdout = process.StandardOutput.ReadToEndAsync();
        var stderr = process.StandardError.ReadToEndAsync();
        if (!process.WaitForExit(TimeSpan.FromMinutes(5)))
        {
            process.Kill(entireProcessTree: true);
            throw new TimeoutException($"{fileName} {string.Join(' ', arguments)} did not finish within 5 minutes:\n{stdout.Result}");
        }
        return (process.ExitCode, stdout.Result, stderr.Result);
    }
}
