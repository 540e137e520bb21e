using System.Text;

namespace IntegrationTasks.Hosting.Remote;

/// <summary>A program a machine must have for what it is asked to run there, and the Debian package that brings it.</summary>
public sealed record RemoteRequirement(string Name, string Program, string Package);

/// <summary>What one look at a machine found: its .NET SDKs, whether it runs as root, which required programs it has.</summary>
public sealed record MachineFacts(string Destination, string? Dotnet, IReadOnlyList<string> Sdks, bool Root, IReadOnlyList<string> Programs)
{
    /// <summary>The .NET SDK major version the suite's global.json asks for.</summary>
    public const int SdkMajor = 10;

    /// <summary>What this machine lacks for <paramref name="required"/>, each with how to add it; empty when nothing.</summary>
    public IReadOnlyList<string> Missing(IReadOnlyList<RemoteRequirement> required, bool needsRoot)
    {
        var missing = new List<string>();
        if (Dotnet is null)
            missing.Add($"the .NET SDK {SdkMajor} (dotnet is not on the PATH of a non-interactive ssh session, nor in ~/.dotnet)");
        else if (!Sdks.Any(v => v.StartsWith($"{SdkMajor}.", StringComparison.Ordinal)))
            missing.Add($"the .NET SDK {SdkMajor} (it has {(Sdks.Count == 0 ? "none" : string.Join(", ", Sdks))})");
        missing.AddRange(required.Where(r => !Programs.Contains(r.Program)).Select(r => $"{r.Name} ({r.Program}: apt-get install -y {r.Package})"));
        if (needsRoot && !Root)
            missing.Add("root (what it is asked to run needs it)");
        return missing;
    }

    /// <summary>The shell that reports the facts, one <c>name=value</c> line each (the programs asked about among them).</summary>
    public static string Script(IEnumerable<RemoteRequirement> required)
    {
        var script = new StringBuilder("d=$(command -v dotnet || true); [ -z \"$d\" ] && [ -x \"$HOME/.dotnet/dotnet\" ] && d=\"$HOME/.dotnet/dotnet\"; ")
            .Append("echo \"dotnet=$d\"; [ -n \"$d\" ] && echo \"sdks=$(\"$d\" --list-sdks 2>/dev/null | cut -d' ' -f1 | tr '\\n' ' ')\"; ")
            .Append("echo \"uid=$(id -u)\"; ");
        foreach (var program in required.Select(r => r.Program).Distinct(StringComparer.Ordinal))
            script.Append("[ -x ").Append(SshMachine.Quote(program)).Append(" ] && echo ").Append(SshMachine.Quote("program=" + program)).Append("; ");
        return script.Append("true").ToString();
    }

    /// <summary>The facts in the script's output.</summary>
    public static MachineFacts Parse(string destination, string output)
    {
        var lines = output.Split('\n', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries)
            .Select(l => l.Split('=', 2)).Where(p => p.Length == 2).ToList();
        string? Value(string name) => lines.LastOrDefault(p => p[0] == name)?[1];
        return new MachineFacts(destination, Value("dotnet") is { Length: > 0 } dotnet ? dotnet : null,
            (Value("sdks") ?? "").Split(' ', StringSplitOptions.RemoveEmptyEntries), Value("uid") == "0",
            [.. lines.Where(p => p[0] == "program").Select(p => p[1])]);
    }

    /// <summary>Looks at a machine over ssh (IT4017 or IT4018 when it cannot be reached).</summary>
    public static async Task<MachineFacts> OfAsync(SshMachine machine, IReadOnlyList<RemoteRequirement> required, CancellationToken cancellationToken)
    {
        var outcome = await machine.RunAsync(["sh", "-c", Script(required)], TimeSpan.FromSeconds(60), cancellationToken).ConfigureAwait(false);
        return Parse(machine.Destination, outcome.Output);
    }
}
