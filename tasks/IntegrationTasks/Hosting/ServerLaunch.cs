using System.Text;

namespace IntegrationTasks.Hosting;

/// <summary>How to start a server process: a program, its arguments and its working directory.</summary>
public sealed record ServerLaunch(string FileName, IReadOnlyList<string> Arguments, string WorkingDirectory)
{
    /// <summary>The dotnet host running this build (the CLI sets DOTNET_HOST_PATH), else dotnet from PATH.</summary>
    public static string DotnetHost =>
        Environment.GetEnvironmentVariable("DOTNET_HOST_PATH") is { Length: > 0 } path && File.Exists(path) ? path : "dotnet";

    /// <summary>
    /// The same `dotnet msbuild build.proj -t:Target` a person would type, told to stop when its input closes, and never to build
    /// the tasks: the build that starts it has built them (or was told not to), and it runs the same DLL. Its global properties
    /// (connection strings with their passwords among them) go in <paramref name="propertiesFile"/>, owner-only, which MSBuild reads
    /// as a response file: never on its command line, where every local user reads them in /proc.
    /// </summary>
    public static ServerLaunch ForTarget(string projectFile, string target, IReadOnlyDictionary<string, string> properties, string propertiesFile)
    {
        var file = WriteResponseFile(properties, propertiesFile);
        string[] arguments =
        [
            "msbuild", projectFile, $"-t:{target}", "-nologo", "-v:n", "-tl:off", "-nr:false", "-p:StopOnStdinClose=true",
            "-clp:NoSummary", // its errors and warnings are forwarded as they happen; a summary would repeat them
            $"@{file}",
        ];
        return new ServerLaunch(DotnetHost, arguments, Path.GetDirectoryName(Path.GetFullPath(projectFile)) ?? ".");
    }

    /// <summary>Writes a build's global properties as MSBuild's response file, owner-only; returns its full path.</summary>
    public static string WriteResponseFile(IReadOnlyDictionary<string, string> properties, string propertiesFile)
    {
        var lines = new StringBuilder();
        foreach (var (name, value) in properties)
            lines.Append("-p:").Append(name).Append('=').Append(ResponseFileValue(Escape(value))).Append('\n');
        lines.Append("-p:SkipTasksBuild=true\n"); // last, so that it wins over a SkipTasksBuild passed on
        var file = Path.GetFullPath(propertiesFile);
        Common.OwnerOnlyFiles.CreateDirectory(Path.GetDirectoryName(file)!);
        Common.OwnerOnlyFiles.Write(file, lines.ToString());
        return file;
    }

    /// <summary>A response file splits on white space and ends a line at '#': those are escaped too (MSBuild unescapes every %XX).</summary>
    private static string ResponseFileValue(string escaped) =>
        escaped.Replace(" ", "%20").Replace("\t", "%09").Replace("\n", "%0A").Replace("\r", "%0D").Replace("#", "%23");

    /// <summary>The same launch run through a command that runs another (<c>ip netns exec NAME</c>: the server side of two hosts).</summary>
    public ServerLaunch WithPrefix(IReadOnlyList<string> prefix) =>
        prefix.Count == 0 ? this : new ServerLaunch(prefix[0], [.. prefix.Skip(1), FileName, .. Arguments], WorkingDirectory);

    /// <summary>A command line's words, for a prefix given as one property (<c>ip netns exec NAME</c>).</summary>
    public static IReadOnlyList<string> Words(string? command) => (command ?? "").Split(' ', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries);

    /// <summary>MSBuild's escaping, so that a connection string's ';' does not split the property list.</summary>
    public static string Escape(string value)
    {
        var builder = new StringBuilder(value.Length);
        foreach (var c in value)
        {
            builder.Append(c switch
            {
                '%' => "%25", ';' => "%3B", ',' => "%2C", '"' => "%22", '\'' => "%27", '$' => "%24", '@' => "%40",
                _ => c.ToString(),
            });
        }
        return builder.ToString();
    }

    /// <summary>The process to start, its three standard streams redirected: its input is how it is told to stop, its output is read.</summary>
    public System.Diagnostics.ProcessStartInfo StartInfo()
    {
        var info = new System.Diagnostics.ProcessStartInfo(FileName)
        {
            WorkingDirectory = WorkingDirectory,
            RedirectStandardInput = true,
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
        };
        foreach (var argument in Arguments)
            info.ArgumentList.Add(argument);
        return info;
    }

    public override string ToString() => $"{Path.GetFileName(FileName)} {string.Join(' ', Arguments)}";
}
