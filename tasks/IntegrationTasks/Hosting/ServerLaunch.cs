using System.Text;

namespace IntegrationTasks.Hosting;

/// <summary>How to start a server: the same `dotnet msbuild build.proj -t:Target` a person would type.</summary>
public sealed record ServerLaunch(string ProjectFile, string Target, IReadOnlyDictionary<string, string> Properties)
{
    public string WorkingDirectory { get; init; } = Path.GetDirectoryName(Path.GetFullPath(ProjectFile)) ?? ".";

    /// <summary>The dotnet host running this build (the CLI sets DOTNET_HOST_PATH), else dotnet from PATH.</summary>
    public static string DotnetHost =>
        Environment.GetEnvironmentVariable("DOTNET_HOST_PATH") is { Length: > 0 } path && File.Exists(path) ? path : "dotnet";

    public IReadOnlyList<string> Arguments()
    {
        var arguments = new List<string>
        {
            "msbuild", ProjectFile, $"-t:{Target}", "-nologo", "-v:n", "-tl:off", "-nr:false",
            "-p:StopOnStdinClose=true",
        };
        foreach (var (name, value) in Properties)
            arguments.Add($"-p:{name}={Escape(value)}");
        return arguments;
    }

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
}
