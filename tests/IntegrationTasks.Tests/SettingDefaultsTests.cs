using System.Reflection;

namespace IntegrationTasks.Tests;

/// <summary>
/// Each default in one place: <see cref="SettingDefaults"/> (or a transport family's own *Defaults class) for the code, checked equal
/// to the one default targets/ states for MSBuild, and never written again as a literal in a task, a host module or a class.
/// </summary>
[TestClass]
[TestCategory("Unit")]
public sealed partial class SettingDefaultsTests
{
    private static readonly Type[] DefaultsClasses = [.. typeof(SettingDefaults).Assembly.GetTypes()
        .Where(t => t is { IsPublic: true, IsAbstract: true, IsSealed: true } && t.Name.EndsWith("Defaults", StringComparison.Ordinal))];

    private static readonly FieldInfo[] Settings = [.. DefaultsClasses.SelectMany(t => t.GetFields(BindingFlags.Public | BindingFlags.Static))];

    private static IEnumerable<string> Sources(string folder, string pattern) =>
        Directory.EnumerateFiles(Path.Combine(RepositoryPaths.Root, folder), pattern, SearchOption.AllDirectories)
            .Where(f => !f.Contains($"{Path.DirectorySeparatorChar}obj{Path.DirectorySeparatorChar}", StringComparison.Ordinal)
                        && !f.Contains($"{Path.DirectorySeparatorChar}bin{Path.DirectorySeparatorChar}", StringComparison.Ordinal));

    [TestMethod]
    public void Every_setting_default_is_stated_once_in_the_targets_and_equal_to_the_code_s()
    {
        var stated = Sources("targets", "*.*").Where(f => f.EndsWith(".props", StringComparison.Ordinal) || f.EndsWith(".targets", StringComparison.Ordinal))
            .SelectMany(f => TargetsDefault().Matches(File.ReadAllText(f)).Select(m => (Name: m.Groups["name"].Value, Value: m.Groups["value"].Value, File: f)))
            .ToLookup(d => d.Name);
        Assert.IsGreaterThanOrEqualTo(20, Settings.Length);
        Assert.Contains(typeof(IntegrationTasks.Queues.Nats.NatsDefaults), DefaultsClasses);
        Assert.Contains(typeof(IntegrationTasks.Queues.Redis.RedisDefaults), DefaultsClasses);
        foreach (var setting in Settings)
        {
            var defaults = stated[setting.Name].ToList();
            Assert.HasCount(1, defaults, $"{setting.Name}: {string.Join(", ", defaults.Select(d => $"{Path.GetFileName(d.File)}={d.Value}"))}");
            Assert.AreEqual(Convert.ToString(setting.GetRawConstantValue(), CultureInfo.InvariantCulture), defaults[0].Value, setting.Name);
        }
    }

    [TestMethod]
    public void No_task_host_module_or_class_writes_a_setting_s_default_again()
    {
        var names = Settings.Select(s => s.Name).ToHashSet(StringComparer.Ordinal);
        var copies = new List<string>();
        var defaultsFiles = DefaultsClasses.Select(t => $"{t.Name}.cs").ToHashSet(StringComparer.Ordinal);
        var fromDefaults = DefaultsClasses.Select(t => $"{t.Name}.").ToArray();
        bool FromDefaults(string value) => fromDefaults.Any(prefix => value.StartsWith(prefix, StringComparison.Ordinal));
        foreach (var file in Sources("tasks", "*.cs").Where(f => !defaultsFiles.Contains(Path.GetFileName(f))))
        {
            var lines = File.ReadAllLines(file);
            for (var i = 0; i < lines.Length; i++)
            {
                foreach (Match m in PropertyInitializer().Matches(lines[i]))
                    if (names.Contains(m.Groups["name"].Value) && m.Groups["value"].Value is not "\"\"" && !FromDefaults(m.Groups["value"].Value))
                        copies.Add($"{Path.GetFileName(file)}:{i + 1} {m.Value}");
                foreach (Match m in HostArgument().Matches(lines[i]))
                    if (names.Contains(string.Concat(m.Groups["name"].Value.Split('-').Select(p => char.ToUpperInvariant(p[0]) + p[1..])))
                        && !FromDefaults(m.Groups["value"].Value))
                        copies.Add($"{Path.GetFileName(file)}:{i + 1} {m.Value}");
            }
        }
        Assert.IsEmpty(copies, string.Join("\n", copies));
        // The check finds what it looks for.
        Assert.IsTrue(PropertyInitializer().IsMatch("public int MaxBatchRecords { get; set; } = 100_000;"));
        Assert.AreEqual("100_000", HostArgument().Match("arguments.Number(\"--max-batch-records\", 100_000)").Groups["value"].Value);
    }

    [GeneratedRegex("""<(?<name>\w+) Condition="'\$\(\k<name>\)' == ''">(?<value>[^<]*)</\k<name>>""")]
    private static partial Regex TargetsDefault();

    [GeneratedRegex(@"public (?:const )?\w+\?? (?<name>\w+) \{ get; (?:set|init); \} = (?<value>[^;]+);")]
    private static partial Regex PropertyInitializer();

    [GeneratedRegex(@"arguments\.Number\(""--(?<name>[a-z-]+)"", (?<value>[^)]+)\)")]
    private static partial Regex HostArgument();
}
