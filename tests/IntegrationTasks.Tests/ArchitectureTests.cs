namespace IntegrationTasks.Tests;

/// <summary>
/// The layers of docs/architecture.md, kept by reading every source file's namespace references (its <c>using</c> lines and
/// qualified names such as <c>Results.PlanRuns</c>): a layer uses only the ones below it, and a family never another family.
/// </summary>
[TestClass]
[TestCategory("Unit")]
public sealed partial class ArchitectureTests
{
    /// <summary>
    /// Each layer's place: a folder may use a lower rank only. Every other folder of the task assembly is a transport family (rank 5,
    /// as Network and Baseline): folders of one rank use none of each other. A new family is checked the day its folder exists.
    /// </summary>
    internal static readonly IReadOnlyDictionary<string, double> LayerRank = new Dictionary<string, double>(StringComparer.Ordinal)
    {
        ["Common"] = 0, ["Data"] = 1, ["Wire"] = 1.5, ["Hosting"] = 2, ["Transfer"] = 3, ["Streams"] = 4, ["Network"] = 5, ["Baseline"] = 5,
        ["Planning"] = 5.5, ["Results"] = 6, ["Exporters"] = 6.5, ["Labs"] = 7,
    };

    private const double FamilyRank = 5;

    private static readonly string TaskSources = Path.Combine(RepositoryPaths.Root, "tasks", "IntegrationTasks");
    private static readonly string HostSources = Path.Combine(RepositoryPaths.Root, "tasks", "IntegrationTasks.Host");

    /// <summary>The source folders of a project (its build output left out).</summary>
    private static string[] Folders(string project) =>
        [.. Directory.GetDirectories(project).Select(Path.GetFileName).OfType<string>().Where(f => f is not ("bin" or "obj")).Order(StringComparer.Ordinal)];

    /// <summary>Every folder of the task assembly and its rank: the layers', and each family's.</summary>
    internal static readonly IReadOnlyDictionary<string, double> Rank =
        Folders(TaskSources).Concat(LayerRank.Keys).Distinct().ToDictionary(f => f, f => LayerRank.GetValueOrDefault(f, FamilyRank), StringComparer.Ordinal);

    /// <summary>The folders of the host process's modules: one per family, none using another's.</summary>
    private static readonly string[] HostFamilies = Folders(HostSources);

    private static readonly Regex QualifiedName = new(
        $@"(?<![\w.])(?:IntegrationTasks\.)?(?<layer>{string.Join("|", Rank.Keys)})\.[A-Z]\w*", RegexOptions.Compiled);

    [GeneratedRegex(@"^\s*(?:global\s+)?using\s+(?:static\s+)?(?:\w+\s*=\s*)?IntegrationTasks\.(?<layer>\w+)", RegexOptions.Multiline)]
    private static partial Regex UsingLine();

    private static readonly Regex HostFamilyName = new($@"(?<![\w.])(?:IntegrationTasks\.)?Host\.(?<family>{string.Join("|", HostFamilies)})\b", RegexOptions.Compiled);

    /// <summary>The layers a piece of C# refers to, comments and the text of string literals left out (an interpolated string's holes are code).</summary>
    internal static HashSet<string> LayersUsedBy(string source)
    {
        var code = CodeText.Of(source);
        var layers = new HashSet<string>(StringComparer.Ordinal);
        foreach (Match match in UsingLine().Matches(code))
            layers.Add(match.Groups["layer"].Value);
        foreach (Match match in QualifiedName.Matches(code))
            layers.Add(match.Groups["layer"].Value);
        return layers;
    }

    /// <summary>What a file in <paramref name="layer"/> may not use: higher ranks, and other folders of its own rank.</summary>
    internal static IEnumerable<string> Violations(string layer, IEnumerable<string> used) =>
        used.Where(other => other != layer && Rank.TryGetValue(other, out var rank) && rank >= Rank[layer]).Order(StringComparer.Ordinal);

    [TestMethod]
    public void Every_layer_uses_only_the_ones_below_it_and_no_family_uses_another()
    {
        var root = TaskSources;
        var found = new List<string>();
        var files = 0;
        foreach (var layer in Folders(root))
        {
            var folder = Path.Combine(root, layer);
            foreach (var file in Directory.GetFiles(folder, "*.cs", SearchOption.AllDirectories))
            {
                files++;
                foreach (var upward in Violations(layer, LayersUsedBy(File.ReadAllText(file))))
                    found.Add($"{Path.GetRelativePath(root, file)} ({layer}) uses {upward}");
            }
        }
        Assert.IsGreaterThan(100, files, "the task assembly's sources were read");
        Assert.IsEmpty(found, string.Join("\n", found));
    }

    /// <summary>The most lines of C# one folder may hold in its own files (its subfolders count apart).</summary>
    internal const int MaxFolderLines = 1500;

    /// <summary>Every source folder of every project under <c>tasks/</c>, with the lines of its own files.</summary>
    internal static IEnumerable<(string Folder, int Lines)> FolderSizes() =>
        Directory.GetDirectories(Path.Combine(RepositoryPaths.Root, "tasks"), "*", SearchOption.AllDirectories)
            .Where(d => !d.Split(Path.DirectorySeparatorChar).Any(part => part is "bin" or "obj"))
            .Select(d => (Path.GetRelativePath(RepositoryPaths.Root, d), Directory.GetFiles(d, "*.cs").Sum(f => File.ReadAllLines(f).Length)))
            .Where(f => f.Item2 > 0);

    [TestMethod]
    public void Every_source_folder_holds_at_most_1500_lines_of_its_own()
    {
        var sizes = FolderSizes().ToList();
        Assert.IsGreaterThan(30, sizes.Count, "the folders were read");
        var large = sizes.Where(f => f.Lines > MaxFolderLines).Select(f => $"{f.Folder}: {f.Lines}").ToList();
        Assert.IsEmpty(large, string.Join("\n", large));
    }

    [TestMethod]
    public void Results_is_three_layers_with_no_file_of_its_own()
    {
        var results = Path.Combine(TaskSources, "Results");
        CollectionAssert.AreEqual(new[] { "Analysis", "Measuring", "Reporting" }, Folders(results));
        Assert.IsEmpty(Directory.GetFiles(results, "*.cs"), "every file in one of the three");
    }

    /// <summary>The folders of each row of docs/architecture.md's layer table, in the table's order (lowest first).</summary>
    private static List<string[]> DocumentedLayers()
    {
        var rows = File.ReadAllLines(Path.Combine(RepositoryPaths.Root, "docs", "architecture.md"))
            .SkipWhile(l => !l.StartsWith("| Layer |", StringComparison.Ordinal)).Skip(2).TakeWhile(l => l.StartsWith('|'));
        return [.. rows.Select(row => Regex.Matches(row.Split('|')[2], @"`(\w+)/`").Select(m => m.Groups[1].Value).ToArray())];
    }

    [TestMethod]
    public void The_documented_layers_are_the_ranks_checked_lowest_first()
    {
        var rows = DocumentedLayers();
        Assert.IsGreaterThanOrEqualTo(10, rows.Count, "the table was read");
        var named = rows.SelectMany(r => r).ToList();
        // Every named folder exists and is ranked; every ranked layer is named; a row ranks no lower than the row above it.
        CollectionAssert.IsSubsetOf(named, Folders(TaskSources), "a folder the table names is missing");
        CollectionAssert.IsSubsetOf(LayerRank.Keys.ToList(), named, "a layer the check ranks is not in the table");
        var ranks = rows.Select(r => (Low: r.Min(f => Rank[f]), High: r.Max(f => Rank[f]))).ToList();
        for (var i = 1; i < ranks.Count; i++)
            Assert.IsGreaterThanOrEqualTo(ranks[i - 1].High, ranks[i].Low, string.Join(", ", rows[i]));
    }

    [TestMethod]
    public void The_transport_seam_uses_nothing_of_the_suite()
    {
        var seam = Path.Combine(RepositoryPaths.Root, "tasks", "IntegrationTasks.Abstractions");
        var found = Directory.GetFiles(seam, "*.cs", SearchOption.AllDirectories).Where(f => !f.Contains($"{Path.DirectorySeparatorChar}obj{Path.DirectorySeparatorChar}", StringComparison.Ordinal))
            .SelectMany(f => Regex.Matches(CodeText.Of(File.ReadAllText(f)), @"IntegrationTasks\.(?<ns>\w+)").Select(m => m.Groups["ns"].Value)
                .Where(ns => ns != "Abstractions").Select(ns => $"{Path.GetFileName(f)} uses IntegrationTasks.{ns}"))
            .Distinct().ToList();
        Assert.IsEmpty(found, string.Join("\n", found));
    }

    /// <summary>Results' layers, lowest first: a file may name the types declared in its own layer or below only.</summary>
    private static readonly string[] ResultsLayers = ["Measuring", "Analysis", "Reporting"];

    [GeneratedRegex(@"^(?:public|internal)\s+(?:(?:static|sealed|abstract|readonly|partial)\s+)*(?:record\s+(?:struct|class)|class|record|struct|enum|interface)\s+(?<name>\w+)", RegexOptions.Multiline)]
    private static partial Regex TopLevelType();

    /// <summary>The types of a higher layer a piece of C# names (not as a member: <c>.Name</c>), comments and string literals left out.</summary>
    internal static IEnumerable<string> HigherTypesNamedBy(string source, int layer, IReadOnlyDictionary<string, int> layerOfType)
    {
        var code = CodeText.Of(source);
        return Regex.Matches(code, @"(?<![.\w])[A-Z]\w*").Select(m => m.Value).Where(name => layerOfType.GetValueOrDefault(name, -1) > layer).Distinct();
    }

    [TestMethod]
    public void Results_layers_use_only_their_own_and_lower_ones_measuring_then_analysis_then_reporting()
    {
        var results = Path.Combine(TaskSources, "Results");
        var files = ResultsLayers.Select(layer => Directory.GetFiles(Path.Combine(results, layer), "*.cs", SearchOption.AllDirectories)).ToArray();
        var layerOfType = files.SelectMany((layerFiles, layer) => layerFiles.SelectMany(f => TopLevelType().Matches(File.ReadAllText(f)))
            .Select(m => (Name: m.Groups["name"].Value, Layer: layer))).ToDictionary(t => t.Name, t => t.Layer, StringComparer.Ordinal);
        Assert.AreEqual(1, layerOfType["Summaries"]);
        Assert.AreEqual(2, layerOfType["ReportDocument"]);
        // Planted: a measuring file naming an analysis type is caught; the same word as a member, in a comment or a string is not.
        CollectionAssert.AreEqual(new[] { "Summaries" },
            HigherTypesNamedBy("var s = Summaries.Of(runs); // ReportDocument\nvar t = \"ReportDocument\"; x.ReportDocument = 1;", 0, layerOfType).ToArray());
        // ... and inside an interpolated string's hole (the text around it still is not).
        CollectionAssert.AreEqual(new[] { "RowKey" }, HigherTypesNamedBy("var s = $\" of {RowKey.Of(run)} ReportDocument\";", 0, layerOfType).ToArray());

        var found = files.SelectMany((layerFiles, layer) => layerFiles.SelectMany(f => HigherTypesNamedBy(File.ReadAllText(f), layer, layerOfType)
            .Select(type => $"{Path.GetRelativePath(results, f)} names {type} ({ResultsLayers[layerOfType[type]]})"))).ToList();
        Assert.IsEmpty(found, string.Join("\n", found));
    }

    [TestMethod]
    public void The_host_process_modules_use_no_other_family_s_module()
    {
        var root = HostSources;
        var found = new List<string>();
        foreach (var family in HostFamilies)
        {
            foreach (var file in Directory.GetFiles(Path.Combine(root, family), "*.cs", SearchOption.AllDirectories))
            {
                var code = CodeText.Of(File.ReadAllText(file));
                found.AddRange(HostFamilyName.Matches(code).Select(m => m.Groups["family"].Value).Where(other => other != family).Distinct()
                    .Select(other => $"{Path.GetRelativePath(root, file)} uses Host.{other}"));
            }
        }
        Assert.IsEmpty(found, string.Join("\n", found));
    }

    [TestMethod]
    public void The_check_sees_a_using_line_and_a_qualified_name_but_not_a_comment_or_a_string()
    {
        // Planted: what the check must catch (an upward using, a family's qualified name) and must not (text that only mentions one).
        CollectionAssert.AreEquivalent(new[] { "Results" }, Violations("Hosting", LayersUsedBy("using IntegrationTasks.Results;\nclass A {}")).ToArray());
        CollectionAssert.AreEquivalent(new[] { "Tcp" }, Violations("Grpc", LayersUsedBy("var x = Tcp.FrameConnection.Create();")).ToArray());
        CollectionAssert.AreEquivalent(new[] { "Transfer" }, Violations("Data", LayersUsedBy("var run = IntegrationTasks.Transfer.MeasurementLog.ReadSingle(f);")).ToArray());
        Assert.IsEmpty(Violations("Data", LayersUsedBy("// see Results.ReportContent\nvar s = \"Results.ReportContent\";")).ToList());
        // An interpolated string's holes are code, its text is not, whatever its form.
        CollectionAssert.AreEquivalent(new[] { "Results" }, Violations("Hosting", LayersUsedBy("var s = $\"of {Results.RowKey.Of(run)} Exporters.X\";")).ToArray());
        CollectionAssert.AreEquivalent(new[] { "Results" }, Violations("Hosting", LayersUsedBy("var s = $@\"a \"\"{{Labs.X}}\"\" {Results.RowKey.Of(run)}\";")).ToArray());
        CollectionAssert.AreEquivalent(new[] { "Results" }, Violations("Hosting", LayersUsedBy("var s = $$\"\"\"\n {Labs.X} {{Results.RowKey.Of($\"{n}\")}}\n\"\"\";")).ToArray());
        Assert.IsEmpty(Violations("Hosting", LayersUsedBy("var c = '\"'; var s = \"\\\" Results.X\"; /* Results.Y */ var t = \"\"\"\n Labs.X \"\" \n\"\"\";")).ToList());
        // A verbatim literal opening on an escaped quote is not raw, and an apostrophe in a directive starts no character literal.
        CollectionAssert.AreEquivalent(new[] { "Results" }, Violations("Hosting", LayersUsedBy("var q = @\"\"\"\"; var r = Results.RowKey.Of(run); var t = \"\"\"\n x \n\"\"\";")).ToArray());
        CollectionAssert.AreEquivalent(new[] { "Results" }, Violations("Hosting", LayersUsedBy("#region Don't\nvar r = Results.RowKey.Of(run);\n#endregion\nvar c = 'x';")).ToArray());
        Assert.IsEmpty(Violations("Results", LayersUsedBy("using IntegrationTasks.Transfer;\nvar p = Data.ServerWorks.Parse(s); var n = run.Network.Length;")).ToList(),
            "downward uses, and a member that happens to share a layer's name, are fine");
        // A family no list names is one by its folder: the WebSocket family may not use the TCP one, nor the TCP one it.
        Assert.AreEqual(5, Rank["WebSockets"]);
        CollectionAssert.AreEquivalent(new[] { "Tcp" }, Violations("WebSockets", LayersUsedBy("using IntegrationTasks.Tcp;\nusing IntegrationTasks.Streams;")).ToArray());
        CollectionAssert.AreEquivalent(new[] { "WebSockets" }, Violations("Tcp", LayersUsedBy("var c = WebSockets.WebSocketConnections.Of(s, p);")).ToArray());
    }
}
