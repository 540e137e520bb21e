using System.Xml.Linq;

namespace IntegrationTasks.Tests;

/// <summary>The README and docs/ as a reader follows them: every relative link lands, every property is documented.</summary>
[TestClass]
[TestCategory("Unit")]
public sealed partial class DocumentationTests
{
    private static IEnumerable<string> Pages() =>
        new[] { Path.Combine(RepositoryPaths.Root, "README.md") }.Concat(Directory.GetFiles(Path.Combine(RepositoryPaths.Root, "docs"), "*.md"));

    [TestMethod]
    public void Every_relative_link_and_anchor_in_the_README_and_docs_resolves()
    {
        var broken = new List<string>();
        var links = 0;
        foreach (var page in Pages())
        {
            var text = WithoutCode(File.ReadAllText(page));
            foreach (Match link in MarkdownLink().Matches(text))
            {
                var target = link.Groups["target"].Value;
                if (target.Contains("://", StringComparison.Ordinal) || target.StartsWith("mailto:", StringComparison.Ordinal))
                    continue;
                links++;
                var hash = target.IndexOf('#', StringComparison.Ordinal);
                var file = hash < 0 ? target : target[..hash];
                var anchor = hash < 0 ? null : target[(hash + 1)..];
                var path = file.Length == 0 ? page : Path.GetFullPath(Path.Combine(Path.GetDirectoryName(page)!, Uri.UnescapeDataString(file)));
                var where = $"{Path.GetRelativePath(RepositoryPaths.Root, page)}: ({target})";
                if (!File.Exists(path) && !Directory.Exists(path))
                    broken.Add($"{where} — no such file");
                else if (anchor is not null && (!path.EndsWith(".md", StringComparison.Ordinal) || !Anchors(File.ReadAllText(path)).Contains(anchor)))
                    broken.Add($"{where} — no such heading");
            }
        }
        Assert.IsGreaterThan(50, links, "the pages link to each other");
        Assert.IsEmpty(broken, string.Join("\n", broken));
    }

    [TestMethod]
    public void Every_public_property_defined_in_targets_is_on_the_properties_page()
    {
        var page = File.ReadAllText(Path.Combine(RepositoryPaths.Root, "docs", "properties.md"));
        var properties = Directory.GetFiles(Path.Combine(RepositoryPaths.Root, "targets"), "*.*", SearchOption.AllDirectories)
            .SelectMany(file => XDocument.Load(file).Descendants().Where(e => e.Name.LocalName == "PropertyGroup").SelectMany(g => g.Elements()))
            .Select(e => e.Name.LocalName).Where(name => !name.StartsWith('_')).Distinct().ToList();
        Assert.IsGreaterThan(100, properties.Count);
        var missing = properties.Where(name => !page.Contains($"`{name}`", StringComparison.Ordinal)).Order().ToList();
        Assert.IsEmpty(missing, "not on docs/properties.md: " + string.Join(", ", missing));
    }

    [TestMethod]
    public void The_README_fits_in_ten_kilobytes_with_both_commands_on_its_first_screen_and_its_picture_present()
    {
        var readme = Path.Combine(RepositoryPaths.Root, "README.md");
        Assert.IsLessThanOrEqualTo(10_240, new FileInfo(readme).Length);
        var lines = File.ReadAllLines(readme);
        var first = lines.Take(60).ToList();
        Assert.IsTrue(first.Any(l => l.StartsWith("dotnet msbuild build.proj -t:RunAll ", StringComparison.Ordinal)), "the main run in the first 60 lines");
        Assert.IsTrue(first.Any(l => l.StartsWith("bash scripts/test.sh", StringComparison.Ordinal)), "the test command in the first 60 lines");
        var image = MarkdownLink().Matches(File.ReadAllText(readme)).Select(m => m.Value).First(l => l.StartsWith('!'));
        var png = Path.Combine(RepositoryPaths.Root, MarkdownLink().Match(image).Groups["target"].Value);
        var header = File.ReadAllBytes(png).Take(8).ToArray();
        CollectionAssert.AreEqual(new byte[] { 0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A }, header, "the README's picture is a PNG");
    }

    [TestMethod]
    public void Anchors_are_made_from_headings_as_GitHub_makes_them()
    {
        CollectionAssert.AreEqual(
            new[] { "network-two-hosts-and-faults", "what-scriptstestsh-does", "set-by-the-build-not-usually-set-by-hand", "faq", "faq-1" },
            Anchors("## Network, two hosts and faults\n### What `scripts/test.sh` does\n## Set by the build (not usually set by hand)\n## FAQ\n## FAQ\n").ToArray());
    }

    /// <summary>The anchors GitHub gives a page's headings: lower case, punctuation dropped, spaces to hyphens, repeats numbered.</summary>
    private static List<string> Anchors(string markdown)
    {
        var anchors = new List<string>();
        foreach (Match heading in Heading().Matches(WithoutCode(markdown)))
        {
            var slug = string.Concat(heading.Groups["title"].Value.Trim().ToLowerInvariant()
                .Where(c => char.IsLetterOrDigit(c) || c is ' ' or '-' or '_')).Replace(' ', '-');
            var unique = slug;
            for (var n = 1; anchors.Contains(unique); n++)
                unique = $"{slug}-{n}";
            anchors.Add(unique);
        }
        return anchors;
    }

    private static string WithoutCode(string markdown) => FencedCode().Replace(markdown, "");

    [GeneratedRegex(@"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\((?<target>[^)\s]+)\)")]
    private static partial Regex MarkdownLink();

    [GeneratedRegex(@"^#{1,6}\s+(?<title>.+)$", RegexOptions.Multiline)]
    private static partial Regex Heading();

    [GeneratedRegex(@"^```.*?^```", RegexOptions.Multiline | RegexOptions.Singleline)]
    private static partial Regex FencedCode();

    /// <summary>A docs page that shows a sample's file (after a <c>&lt;!-- sample: path --&gt;</c> line) shows it as it is: what PackageTests compiles and runs.</summary>
    [TestMethod]
    public void Every_sample_file_a_page_shows_is_the_file_itself()
    {
        var shown = 0;
        foreach (var page in Pages())
        {
            foreach (Match match in SampleBlock().Matches(File.ReadAllText(page)))
            {
                var file = Path.Combine(RepositoryPaths.Root, match.Groups["path"].Value);
                Assert.AreEqual(File.ReadAllText(file).TrimEnd('\n'), match.Groups["code"].Value, $"{Path.GetFileName(page)} shows {match.Groups["path"].Value}");
                shown++;
            }
        }
        Assert.IsGreaterThanOrEqualTo(4, shown, "the sample's global.json, project, library and transport are shown");
    }

    /// <summary>
    /// Wording that speaks of where the project was built (its machine, its registries, its sessions) rather than of the project:
    /// none of it in any text a user reads — the README, the docs, the scripts, the targets, the packages' READMEs, the template,
    /// and the report (its snapshots). The dated results notebook describes the machine each measurement ran on, by design.
    /// </summary>
    [TestMethod]
    public void No_text_a_user_reads_speaks_of_where_the_project_was_built()
    {
        string[] wording = ["this VM", "the project's VM", "no one here", "closed network", "NuGet or npm", "package list", "grepped", "served here",
            "cannot run here", "not run here", "run here (", "installed here", "built here", "this session", "these sessions", "the sandbox"];
        var root = RepositoryPaths.Root;
        var shipped = Pages().Where(p => Path.GetFileName(p) != "results.md")
            .Concat(Directory.GetFiles(Path.Combine(root, "scripts"), "*", SearchOption.AllDirectories))
            .Concat(Directory.GetFiles(Path.Combine(root, "targets"), "*", SearchOption.AllDirectories))
            .Concat(Directory.GetFiles(Path.Combine(root, "tasks"), "README.md", SearchOption.AllDirectories))
            .Concat(Directory.GetFiles(Path.Combine(root, "samples"), "*", SearchOption.AllDirectories).Where(f => !f.Contains("/bin/", StringComparison.Ordinal) && !f.Contains("/obj/", StringComparison.Ordinal) && !f.Contains("/artifacts/", StringComparison.Ordinal)))
            .Concat(Directory.GetFiles(Path.Combine(root, "tests", "IntegrationTasks.Tests", "Snapshots")))
            .Where(f => !f.Contains("/bin/", StringComparison.Ordinal) && !f.Contains("/obj/", StringComparison.Ordinal))
            .ToList();
        var found = shipped.SelectMany(file => File.ReadLines(file).Select((line, i) => (file, line, number: i + 1)))
            .Where(l => wording.Any(w => l.line.Contains(w, StringComparison.OrdinalIgnoreCase)))
            .Select(l => $"{Path.GetRelativePath(root, l.file)}:{l.number}: {l.line.Trim()}")
            .ToList();
        Assert.IsGreaterThan(40, shipped.Count, "the shipped text was found");
        Assert.IsEmpty(found, string.Join("\n", found));
    }

    [GeneratedRegex(@"<!-- sample: (?<path>[^ ]+) -->\n```\w*\n(?<code>.*?)\n```", RegexOptions.Singleline)]
    private static partial Regex SampleBlock();
}
