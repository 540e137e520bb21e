using System.Diagnostics;
using System.Globalization;
using System.Runtime.InteropServices;
using IntegrationTasks.Data;

namespace IntegrationTasks.Results;

/// <summary>
/// What a results file must carry to be compared with another one: the machine, the runtimes, the
/// database and its version, the commit, and a fingerprint of the data the transports moved.
/// </summary>
public static class RunEnvironment
{
    public static Dictionary<string, string> Describe(string? repositoryRoot)
    {
        var invariant = CultureInfo.InvariantCulture;
        return new Dictionary<string, string>
        {
            ["Date (UTC)"] = DateTimeOffset.UtcNow.ToString("yyyy-MM-dd HH:mm:ss", invariant),
            ["OS"] = RuntimeInformation.OSDescription,
            ["CPU"] = CpuModel(),
            ["Cores"] = Environment.ProcessorCount.ToString(invariant),
            [".NET"] = RuntimeInformation.FrameworkDescription,
            ["MSBuild"] = FileVersionInfo.GetVersionInfo(typeof(Microsoft.Build.Framework.ITask).Assembly.Location).ProductVersion ?? "?",
            ["Git commit"] = repositoryRoot is null ? "unknown" : GitCommit(repositoryRoot),
        };
    }

    private static string CpuModel()
    {
        try
        {
            var line = File.ReadLines("/proc/cpuinfo").FirstOrDefault(l => l.StartsWith("model name", StringComparison.Ordinal));
            return line is null ? RuntimeInformation.ProcessArchitecture.ToString() : line[(line.IndexOf(':') + 1)..].Trim();
        }
        catch (IOException)
        {
            return RuntimeInformation.ProcessArchitecture.ToString();
        }
    }

    /// <summary>The repository's commit (12 digits), marked when the work tree has uncommitted changes.</summary>
    public static string GitCommit(string repositoryRoot)
    {
        try
        {
            var info = new ProcessStartInfo("git", ["-C", repositoryRoot, "rev-parse", "--short=12", "HEAD"])
            {
                RedirectStandardOutput = true, RedirectStandardError = true, UseShellExecute = false,
            };
            using var git = Process.Start(info)!;
            var output = git.StandardOutput.ReadToEnd().Trim();
            git.WaitForExit(10_000);
            var dirty = new ProcessStartInfo("git", ["-C", repositoryRoot, "status", "--porcelain", "--untracked-files=no"])
            {
                RedirectStandardOutput = true, RedirectStandardError = true, UseShellExecute = false,
            };
            using var status = Process.Start(dirty)!;
            var changes = status.StandardOutput.ReadToEnd().Trim();
            status.WaitForExit(10_000);
            return git.ExitCode == 0 && output.Length > 0 ? output + (changes.Length > 0 ? " (with uncommitted changes)" : "") : "unknown";
        }
        catch (Exception e) when (e is System.ComponentModel.Win32Exception or InvalidOperationException)
        {
            return "unknown (git not available)";
        }
    }

    /// <summary>The database's product and version, as the server reports it.</summary>
    public static async Task<string> DatabaseVersionAsync(Database database, CancellationToken cancellationToken)
    {
        await using var connection = await database.OpenAsync(cancellationToken).ConfigureAwait(false);
        await using var command = connection.CreateCommand();
        command.CommandText = database.Provider switch
        {
            DatabaseProvider.Sqlite => "SELECT 'SQLite ' || sqlite_version()",
            DatabaseProvider.PostgreSql or DatabaseProvider.MariaDb => "SELECT version()", // MariaDB's names itself: 10.11.19-MariaDB-…
            _ => "SELECT @@VERSION",
        };
        return Convert.ToString(await command.ExecuteScalarAsync(cancellationToken).ConfigureAwait(false), CultureInfo.InvariantCulture) ?? "?";
    }
}
