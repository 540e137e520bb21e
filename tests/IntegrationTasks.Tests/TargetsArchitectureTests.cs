using System.Xml.Linq;

namespace IntegrationTasks.Tests;

/// <summary>
/// The targets the suite ships, read as files: each small, each body said once, every target a file names defined somewhere, and a
/// file's private targets (a leading underscore) run from another file only by the executor's own files.
/// </summary>
[TestClass]
[TestCategory("Unit")]
public sealed class TargetsArchitectureTests
{
    internal const int MaxTargetsFileLines = 200;

    /// <summary>The executor's files: RunAll's flow and the steps it runs around each run, which call each other's private targets.</summary>
    private static readonly string[] ExecutorFiles =
        ["RunAll.targets", "Transports.targets", "Brokers.targets", "Servers.targets", "Recording.targets", "Sweeps.targets", "Reporting.targets", "Data.targets"];

    private static readonly string TargetsFolder = Path.Combine(RepositoryPaths.Root, "targets");

    private static IEnumerable<(string File, XElement Target)> Targets() =>
        Directory.GetFiles(TargetsFolder, "*.targets", SearchOption.AllDirectories)
            .SelectMany(f => XDocument.Load(f).Root!.Elements("Target").Select(t => (Path.GetRelativePath(TargetsFolder, f), t)));

    private static IEnumerable<string> Names(string? list) =>
        (list ?? "").Split(';', StringSplitOptions.TrimEntries | StringSplitOptions.RemoveEmptyEntries).Where(n => !n.Contains('$') && !n.Contains('@') && !n.Contains('%'));

    [TestMethod]
    public void No_targets_file_is_over_200_lines()
    {
        var files = Directory.GetFiles(TargetsFolder, "*.targets", SearchOption.AllDirectories);
        Assert.IsGreaterThan(15, files.Length);
        var large = files.Select(f => (File: Path.GetRelativePath(TargetsFolder, f), Lines: File.ReadAllLines(f).Length))
            .Where(f => f.Lines > MaxTargetsFileLines).Select(f => $"{f.File}: {f.Lines}").ToList();
        Assert.IsEmpty(large, string.Join("\n", large));
    }

    [TestMethod]
    public void No_target_body_is_said_twice()
    {
        var bodies = Targets().Where(t => t.Target.HasElements)
            .GroupBy(t => string.Concat(t.Target.Nodes().OfType<XElement>().Select(e => e.ToString(SaveOptions.DisableFormatting))))
            .Where(g => g.Count() > 1)
            .Select(g => string.Join(" = ", g.Select(t => $"{t.File}:{t.Target.Attribute("Name")!.Value}"))).ToList();
        Assert.IsEmpty(bodies, string.Join("\n", bodies));
    }

    [TestMethod]
    public void Every_target_named_is_defined_and_private_ones_are_called_only_from_their_file_or_the_executor()
    {
        var targets = Targets().ToList();
        var fileOf = targets.GroupBy(t => t.Target.Attribute("Name")!.Value, StringComparer.OrdinalIgnoreCase)
            .ToDictionary(g => g.Key, g => g.Select(t => t.File).ToHashSet(), StringComparer.OrdinalIgnoreCase);
        // The SDK's own and MSBuild's targets a file may name without defining them.
        string[] elsewhere = ["Build", "Restore", "Pack"];
        var found = new List<string>();
        foreach (var (file, target) in targets)
        {
            var named = Names(target.Attribute("DependsOnTargets")?.Value).Concat(Names(target.Attribute("AfterTargets")?.Value))
                .Concat(target.Descendants().Where(e => e.Name.LocalName is "CallTarget" or "MSBuild").SelectMany(e => Names(e.Attribute("Targets")?.Value)))
                .Concat(target.Descendants("OnError").SelectMany(e => Names(e.Attribute("ExecuteTargets")?.Value)));
            foreach (var name in named.Distinct(StringComparer.OrdinalIgnoreCase).Where(n => !elsewhere.Contains(n)))
            {
                if (!fileOf.TryGetValue(name, out var definedIn))
                    found.Add($"{file}: {target.Attribute("Name")!.Value} names {name}, defined nowhere");
                else if (name.StartsWith('_') && !definedIn.Contains(file) && !ExecutorFiles.Contains(file) && !definedIn.Any(ExecutorFiles.Contains))
                    found.Add($"{file}: {target.Attribute("Name")!.Value} runs {name}, private to {string.Join(", ", definedIn)}");
            }
        }
        Assert.IsEmpty(found, string.Join("\n", found));
    }
}
