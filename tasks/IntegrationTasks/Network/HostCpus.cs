using System.Globalization;
using System.Text.RegularExpressions;

namespace IntegrationTasks.Network;

/// <summary>
/// Which CPUs each simulated host may use (<c>-p:HostCpus=SERVER/CLIENT</c>, each a cpuset list such as <c>0</c> or <c>0-3,6</c>;
/// <c>Split</c>: the first half of this machine's CPUs to the server, the rest to the client). Empty: both hosts share every CPU.
/// </summary>
public sealed partial record HostCpus(string Server, string Client)
{
    public const string SplitValue = "Split";

    /// <summary>The key's and the report's text: "0/1" (server/client).</summary>
    public override string ToString() => $"{Server}/{Client}";

    /// <summary>The split asked for, or null for shared CPUs; IT1001 for a list this machine cannot give (unknown, overlapping or empty).</summary>
    public static HostCpus? Parse(string? value, int processorCount)
    {
        if (string.IsNullOrWhiteSpace(value))
            return null;
        if (string.Equals(value.Trim(), SplitValue, StringComparison.OrdinalIgnoreCase))
        {
            if (processorCount < 2)
                throw new IntegrationException(ErrorCodes.InvalidParameter, "HostCpus=Split needs at least two CPUs (this machine has one).");
            var half = processorCount / 2;
            return new HostCpus(Range(0, half), Range(half, processorCount));
        }
        var sides = value.Split('/');
        if (sides.Length != 2)
            throw new IntegrationException(ErrorCodes.InvalidParameter,
                $"HostCpus is the server's CPUs and the client's, as SERVER/CLIENT (e.g. 0/1 or 0-1/2-3), or Split (was '{value}').");
        var server = Cpus(sides[0], processorCount);
        var client = Cpus(sides[1], processorCount);
        if (server.Overlaps(client))
            throw new IntegrationException(ErrorCodes.InvalidParameter,
                $"HostCpus gives CPU {string.Join(", ", server.Intersect(client).Order())} to both hosts ('{value}'): each host's CPUs must be its own.");
        return new HostCpus(ListOf(server), ListOf(client));
    }

    /// <summary>A set of CPUs as the shortest cpuset list ("0-2,5"): one split is one key however it was typed.</summary>
    internal static string ListOf(IEnumerable<int> cpus)
    {
        var ranges = new List<string>();
        foreach (var cpu in cpus.Order())
        {
            if (ranges.Count > 0 && ranges[^1].Split('-') is var last && int.Parse(last[^1], CultureInfo.InvariantCulture) == cpu - 1)
                ranges[^1] = $"{last[0]}-{cpu.ToString(CultureInfo.InvariantCulture)}";
            else
                ranges.Add(cpu.ToString(CultureInfo.InvariantCulture));
        }
        return string.Join(',', ranges);
    }

    private static string Range(int from, int to) => to - from == 1
        ? from.ToString(CultureInfo.InvariantCulture)
        : string.Create(CultureInfo.InvariantCulture, $"{from}-{to - 1}");

    /// <summary>The CPUs of a cpuset list ("0-2,5"), each below <paramref name="processorCount"/>.</summary>
    internal static HashSet<int> Cpus(string list, int processorCount)
    {
        var cpus = new HashSet<int>();
        foreach (var part in list.Split(',', StringSplitOptions.TrimEntries))
        {
            if (CpuRange().Match(part) is not { Success: true } match)
                throw new IntegrationException(ErrorCodes.InvalidParameter, $"HostCpus: '{list}' is not a list of CPUs (such as 0, 0-3 or 0,2).");
            var first = int.Parse(match.Groups[1].Value, CultureInfo.InvariantCulture);
            var last = match.Groups[2].Success ? int.Parse(match.Groups[2].Value, CultureInfo.InvariantCulture) : first;
            if (last < first || last >= processorCount)
                throw new IntegrationException(ErrorCodes.InvalidParameter,
                    $"HostCpus: CPUs '{part}' are not this machine's (it has CPUs 0-{processorCount - 1}).");
            for (var cpu = first; cpu <= last; cpu++)
                cpus.Add(cpu);
        }
        return cpus;
    }

    [GeneratedRegex(@"^(\d+)(?:-(\d+))?$")]
    private static partial Regex CpuRange();
}

/// <summary>
/// A cgroup cpuset per simulated host: every process started through its join script (<see cref="ServerJoin"/>, <see cref="ClientJoin"/>) (and all it starts) runs on its host's
/// CPUs only, and cannot leave them. Uses cgroup v2's cpuset controller where the machine has it, else v1's cpuset hierarchy.
/// Disposing removes the groups (their processes are gone by then); a group left by a build killed outright is removed by the next.
/// </summary>
public sealed partial class HostCpuSets : IAsyncDisposable
{
    private const string GroupPrefix = "integrationtasks-";
    private readonly IEventLog _log;
    private readonly List<string> _groups = [];

    private HostCpuSets(IEventLog log) => _log = log;

    /// <summary>The server host's and the client host's join scripts (a prefix word each).</summary>
    public string ServerJoin { get; private set; } = "";
    public string ClientJoin { get; private set; } = "";

    /// <summary>How the split is made, for the report: the CPUs and the cgroup version.</summary>
    public string Description { get; private set; } = "";

    /// <summary>Where this machine's cpusets live: v2's unified root with cpuset enabled, or v1's cpuset mount; null without either.</summary>
    internal static (string Root, bool V2)? Hierarchy(string cgroupRoot = "/sys/fs/cgroup")
    {
        var controllers = Path.Combine(cgroupRoot, "cgroup.controllers");
        if (File.Exists(controllers) && File.ReadAllText(controllers).Split(' ', StringSplitOptions.TrimEntries).Contains("cpuset"))
            return (cgroupRoot, true);
        var v1 = Path.Combine(cgroupRoot, "cpuset");
        return File.Exists(Path.Combine(v1, "cpuset.cpus")) ? (v1, false) : null;
    }

    /// <summary>Makes both hosts' groups and their join scripts (in <paramref name="scriptDirectory"/>, owner-only); on failure removes what was made.</summary>
    public static HostCpuSets Create(int id, HostCpus cpus, string scriptDirectory, IEventLog log)
    {
        var hierarchy = Hierarchy() ?? throw new IntegrationException(ErrorCodes.NetworkSetupFailed,
            "HostCpus needs cgroup cpusets (cgroup v2 with the cpuset controller, or v1's cpuset hierarchy under /sys/fs/cgroup), which this system does not offer.");
        if (scriptDirectory.Contains(' ', StringComparison.Ordinal))
            throw new IntegrationException(ErrorCodes.InvalidParameter,
                $"HostCpus: the hosts' launch scripts go in {scriptDirectory}, and a launch prefix cannot hold a space: set ArtifactsDir to a path without one.");
        RemoveLeftovers(hierarchy.Root, log);
        var sets = new HostCpuSets(log);
        try
        {
            if (hierarchy.V2)
                EnableCpusetBelowRoot(hierarchy.Root);
            Directory.CreateDirectory(scriptDirectory);
            sets.ServerJoin = sets.Make(hierarchy.Root, id, "server", cpus.Server, scriptDirectory);
            sets.ClientJoin = sets.Make(hierarchy.Root, id, "client", cpus.Client, scriptDirectory);
            sets.Description = $"server host on CPUs {cpus.Server}, client host on CPUs {cpus.Client} (cgroup {(hierarchy.V2 ? "v2" : "v1")} cpusets)";
            return sets;
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            sets.RemoveGroups();
            throw new IntegrationException(ErrorCodes.NetworkSetupFailed, $"Could not make the hosts' cpusets: {e.Message}");
        }
        catch
        {
            sets.RemoveGroups();
            throw;
        }
    }

    private static void EnableCpusetBelowRoot(string root)
    {
        var control = Path.Combine(root, "cgroup.subtree_control");
        if (!File.ReadAllText(control).Split(' ', StringSplitOptions.TrimEntries).Contains("cpuset"))
            File.WriteAllText(control, "+cpuset");
    }

    private string Make(string root, int id, string side, string cpuList, string scriptDirectory)
    {
        var group = Path.Combine(root, string.Create(CultureInfo.InvariantCulture, $"{GroupPrefix}{id}-{side}"));
        Directory.CreateDirectory(group);
        _groups.Add(group);
        // v1 needs the memory nodes set before a task may join; v2 inherits them. The parent's effective nodes either way.
        var mems = new[] { "cpuset.effective_mems", "cpuset.mems.effective", "cpuset.mems" }.Select(f => Path.Combine(root, f)).FirstOrDefault(File.Exists) is { } memsFile
            ? File.ReadAllText(memsFile).Trim() : "";
        File.WriteAllText(Path.Combine(group, "cpuset.cpus"), cpuList);
        File.WriteAllText(Path.Combine(group, "cpuset.mems"), mems.Length > 0 ? mems : "0");
        // A prefix word: the script moves itself into the group, then becomes the command (everything it starts stays in). Inside a
        // network namespace `ip netns exec` mounts /sys afresh, without the cgroup hierarchies: the group is reached through this
        // process's own root (/proc/PID/root), which sees them and lives as long as the hosts.
        var script = Path.Combine(scriptDirectory, $"{side}-cpus.sh");
        var procs = string.Create(CultureInfo.InvariantCulture, $"/proc/{Environment.ProcessId}/root{Path.Combine(group, "cgroup.procs")}");
        OwnerOnlyFiles.Write(script, $"#!/bin/sh\necho $$ > '{procs}' || exit 125\nexec \"$@\"\n");
        if (!OperatingSystem.IsWindows())
            File.SetUnixFileMode(script, UnixFileMode.UserRead | UnixFileMode.UserWrite | UnixFileMode.UserExecute);
        return script;
    }

    /// <summary>Groups of ours whose build is gone and that hold no process: removed before making new ones.</summary>
    private static void RemoveLeftovers(string root, IEventLog log)
    {
        foreach (var group in Directory.GetDirectories(root, GroupPrefix + "*"))
        {
            if (OurName().Match(Path.GetFileName(group)) is not { Success: true } match || Directory.Exists($"/proc/{match.Groups[1].Value}"))
                continue;
            // Whatever still runs in it outlived its build: it goes with the group.
            try
            {
                KillMembers(group);
                Directory.Delete(group);
                log.Warning(ErrorCodes.LeftoverRemoved, $"Removed the cpuset {group}, left behind by a build that no longer runs.");
            }
            catch (IOException e)
            {
                log.Warning(ErrorCodes.NetworkSetupFailed, $"Could not remove the cpuset {group}, left behind by a build that no longer runs: {e.Message}");
            }
        }
    }

    [GeneratedRegex(@"^integrationtasks-(\d+)-(?:server|client)$")]
    private static partial Regex OurName();

    /// <summary>
    /// Removes the groups once their last processes are gone (an exiting process leaves its group a moment after its parent saw it
    /// end); one still there after 2 s outlived its build and is killed, so that nothing of the hosts stays behind.
    /// </summary>
    public async ValueTask DisposeAsync()
    {
        for (var attempt = 0; attempt < 20 && _groups.Any(g => Members(g).Count > 0); attempt++)
            await Task.Delay(100).ConfigureAwait(false);
        foreach (var group in _groups)
            KillMembers(group);
        for (var attempt = 0; attempt < 20 && _groups.Any(g => Members(g).Count > 0); attempt++)
            await Task.Delay(100).ConfigureAwait(false);
        RemoveGroups();
    }

    private static List<int> Members(string group)
    {
        var procs = Path.Combine(group, "cgroup.procs");
        return File.Exists(procs)
            ? [.. File.ReadAllLines(procs).Where(l => l.Length > 0).Select(l => int.Parse(l, CultureInfo.InvariantCulture))]
            : [];
    }

    private static void KillMembers(string group)
    {
        foreach (var pid in Members(group))
        {
            try
            {
                using var process = System.Diagnostics.Process.GetProcessById(pid);
                process.Kill();
            }
            catch (Exception e) when (e is ArgumentException or InvalidOperationException or System.ComponentModel.Win32Exception)
            {
                // gone meanwhile
            }
        }
    }

    private void RemoveGroups()
    {
        foreach (var group in _groups)
        {
            try
            {
                // A cgroup directory is removed with rmdir (its files are the kernel's); only once no process is in it.
                Directory.Delete(group);
            }
            catch (IOException e)
            {
                _log.Warning(ErrorCodes.NetworkSetupFailed, $"Could not remove the cpuset {group}: {e.Message}");
            }
        }
        _groups.Clear();
    }
}
