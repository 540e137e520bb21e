using System.Text;

namespace IntegrationTasks.Hosting.Remote;

/// <summary>A program a machine must have for what it is asked to run there, and the Debian package that brings it.</summary>
public sealed record RemoteRequirement(string Name, string Program, string Package);

/// <summary>
/// What one look at a machine found: its .NET SDKs, whether it runs as root, which required programs it has, and what a report
/// says of a machine (CPU, cores, memory, OS) with its clock against this one's.
/// </summary>
public sealed record MachineFacts(string Destination, string? Dotnet, IReadOnlyList<string> Sdks, bool Root, IReadOnlyList<string> Programs)
{
    public string Cpu { get; init; } = "";
    public int Cores { get; init; }
    public long MemoryBytes { get; init; }
    public string Os { get; init; } = "";

    /// <summary>Its own name for itself (<c>hostname</c>): a server there puts it among its certificate's names.</summary>
    public string HostName { get; init; } = "";

    /// <summary>Its clock less this one's, within ± <see cref="ClockUncertaintyMs"/> (half the time the look took: when in it the clock was read is not known).</summary>
    public double? ClockOffsetMs { get; init; }
    public double? ClockUncertaintyMs { get; init; }

    /// <summary>The machine as the report and the log say it: "AMD EPYC, 2 cores, 23.4 GiB, Debian GNU/Linux 12 (bookworm) 6.1.0; clock +3 ms ±40 ms".</summary>
    public string Describe() =>
        FormattableString.Invariant($"{(Cpu.Length > 0 ? Cpu : "CPU unknown")}, {Cores} cores, {MemoryBytes / (double)(1L << 30):0.#} GiB, {(Os.Length > 0 ? Os : "OS unknown")}")
        + (ClockOffsetMs is { } offset ? FormattableString.Invariant($"; clock {offset:+0;-0;0} ms ±{ClockUncertaintyMs:0} ms against this machine's") : "");

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
            .Append("echo \"uid=$(id -u)\"; echo \"hostname=$(hostname)\"; ")
            .Append("echo \"cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-)\"; echo \"cores=$(nproc)\"; ")
            .Append("echo \"memory_kb=$(awk '/^MemTotal:/ {print $2}' /proc/meminfo)\"; ")
            .Append("echo \"os=$(. /etc/os-release 2>/dev/null; echo \"$PRETTY_NAME\") $(uname -r)\"; echo \"clock=$(date +%s%N)\"; ");
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
        var invariant = System.Globalization.CultureInfo.InvariantCulture;
        return new MachineFacts(destination, Value("dotnet") is { Length: > 0 } dotnet ? dotnet : null,
            (Value("sdks") ?? "").Split(' ', StringSplitOptions.RemoveEmptyEntries), Value("uid") == "0",
            [.. lines.Where(p => p[0] == "program").Select(p => p[1])])
        {
            Cpu = (Value("cpu") ?? "").Trim(), Os = (Value("os") ?? "").Trim(), HostName = (Value("hostname") ?? "").Trim(),
            Cores = int.TryParse(Value("cores"), System.Globalization.NumberStyles.Integer, invariant, out var cores) ? cores : 0,
            MemoryBytes = long.TryParse(Value("memory_kb"), System.Globalization.NumberStyles.Integer, invariant, out var kilobytes) ? kilobytes * 1024 : 0,
        };
    }

    /// <summary>Looks at a machine over ssh (IT4017 or IT4018 when it cannot be reached).</summary>
    public static async Task<MachineFacts> OfAsync(SshMachine machine, IReadOnlyList<RemoteRequirement> required, CancellationToken cancellationToken)
    {
        var before = DateTimeOffset.UtcNow;
        var outcome = await machine.RunAsync(["sh", "-c", Script(required)], TimeSpan.FromSeconds(60), cancellationToken).ConfigureAwait(false);
        var after = DateTimeOffset.UtcNow;
        var facts = Parse(machine.Destination, outcome.Output);
        return ClockOf(outcome.Output) is { } remote ? facts with
        {
            ClockOffsetMs = (remote - (before + (after - before) / 2)).TotalMilliseconds, ClockUncertaintyMs = (after - before).TotalMilliseconds / 2,
        } : facts;
    }

    /// <summary>The machine's clock as the script read it (nanoseconds since the epoch).</summary>
    private static DateTimeOffset? ClockOf(string output) =>
        output.Split('\n').Select(l => l.Trim()).FirstOrDefault(l => l.StartsWith("clock=", StringComparison.Ordinal)) is { } line
        && long.TryParse(line["clock=".Length..], System.Globalization.NumberStyles.Integer, System.Globalization.CultureInfo.InvariantCulture, out var nanoseconds)
            ? DateTimeOffset.UnixEpoch.AddTicks(nanoseconds / 100)
            : null;
}
