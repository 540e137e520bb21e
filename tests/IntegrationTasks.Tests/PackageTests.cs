using System.IO.Compression;
using System.Xml.Linq;

namespace IntegrationTasks.Tests;

/// <summary>
/// The suite as a package, by docs/use-from-your-repository.md word for word: its pack command run as written (with a feed folder
/// and a version of the test's own), its commands from an empty folder outside the repository run as written — the template
/// installed into a store of its own, the project made, restored from that feed only into a packages folder of its own — and
/// its RunAll measuring its own transport beside two of the suite's: verified, ranked, under many clients and a fault; a second
/// build rebuilds nothing. Alone: the project's builds are heavy, and packing reads the task assemblies every other test uses.
/// </summary>
[TestClass]
[DoNotParallelize]
public sealed partial class PackageTests
{
    private static readonly string Sample = Path.Combine(RepositoryPaths.Root, "samples", "MeasureMyTransport");
    private static readonly string Page = Path.Combine(RepositoryPaths.Root, "docs", "use-from-your-repository.md");

    /// <summary>The two values the page asks a reader to change to theirs.</summary>
    private const string PageFeed = "~/integrationtasks-feed";

    [TestMethod]
    public void Following_the_page_from_an_empty_folder_the_template_s_project_measures_its_transport_beside_the_suites_own()
    {
        using var work = new TempDirectory("it-package-");
        var version = $"0.3.0-test.{DateTime.UtcNow:yyyyMMddHHmmss}.{Environment.ProcessId}";
        var feed = Path.Combine(work, "feed");
        var empty = Directory.CreateDirectory(Path.Combine(work, "empty")).FullName;
        var pageVersion = File.ReadAllText(Path.Combine(Sample, "global.json")).Split('"')[5];
        string Yours(string command) => command.Replace(PageFeed, feed, StringComparison.Ordinal).Replace(pageVersion, version, StringComparison.Ordinal)
            .Replace("-c Release", $"-c {HostingTests.Configuration}", StringComparison.Ordinal);

        var blocks = CommandBlock().Matches(File.ReadAllText(Page)).ToDictionary(m => m.Groups["name"].Value, m => m.Groups["code"].Value.Split('\n'));
        // The build the page begins with is this test run's own: the pack after it must not build again (it would stamp the
        // assemblies every other test uses with the test's version).
        var pack = blocks["pack"];
        Assert.AreEqual(2, pack.Length, string.Join("\n", pack));
        StringAssert.StartsWith(pack[0], "dotnet build IntegrationTasks.sln -c Release");
        StringAssert.Contains(pack[1], "--no-build");
        var packed = RepositoryPaths.Run("bash", ["-c", Yours(pack[1])]);
        Assert.AreEqual(0, packed.ExitCode, packed.Stdout + packed.Stderr);
        CheckSdkPackage(Path.Combine(feed, $"IntegrationTasks.Sdk.{version}.nupkg"), version);
        using (var seam = ZipFile.OpenRead(Path.Combine(feed, $"IntegrationTasks.Abstractions.{version}.nupkg")))
            CollectionAssert.AreEquivalent(new[] { "lib/net10.0/IntegrationTasks.Abstractions.dll", "lib/net10.0/IntegrationTasks.Abstractions.xml" },
                seam.Entries.Select(e => e.FullName).Where(n => n.StartsWith("lib/", StringComparison.Ordinal)).ToArray());

        // The commands from an empty folder, as written, in one shell (the page's cd holds for the lines after it); what the run
        // measures narrowed by the environment (MSBuild reads it as properties), each port a free one.
        var environment = new Dictionary<string, string?>
        {
            ["NUGET_PACKAGES"] = Path.Combine(work, "packages"), ["DOTNET_CLI_HOME"] = Path.Combine(work, "cli-home"),
            ["RecordCounts"] = "4000", ["Clients"] = "1+2", ["Repetitions"] = "2", ["WarmupRuns"] = "1", ["Calibrate"] = "false",
            ["MyTransportPort"] = TestPorts.Free().ToString(CultureInfo.InvariantCulture),
        };
        foreach (var port in TestBuild.PortProperties)
            environment[port] = TestPorts.Free().ToString(CultureInfo.InvariantCulture);
        var commands = blocks["from-an-empty-folder"];
        var run = RepositoryPaths.Run("bash", ["-ec", string.Join("\n", commands.Select(Yours))], environment, empty);
        Assert.AreEqual(0, run.ExitCode, run.Stdout + run.Stderr);
        var project = Path.Combine(empty, "measure-mytransport");
        Assert.IsTrue(Directory.Exists(Path.Combine(work, "packages", "integrationtasks.sdk", version)), "the SDK restored from the feed into its own folder");

        // The template makes the sample's files, but for the feed and the version.
        foreach (var file in Directory.EnumerateFiles(Sample, "*", SearchOption.AllDirectories).Select(f => Path.GetRelativePath(Sample, f))
                     .Where(f => !f.Split(Path.DirectorySeparatorChar).Any(part => part is "bin" or "obj" or "artifacts" or ".template.config")))
        {
            Assert.AreEqual(File.ReadAllText(Path.Combine(Sample, file)).Replace("../../artifacts/packages", feed, StringComparison.Ordinal)
                .Replace(pageVersion, version, StringComparison.Ordinal).TrimEnd(), File.ReadAllText(Path.Combine(project, file)).TrimEnd(), file);
        }

        var rows = Measured(project);
        foreach (var transport in new[] { "MyTransport", "PipelinedCopy", "GrpcClient" })
        {
            foreach (var clients in new[] { "1", "2" })
            {
                var runs = rows.Where(r => r["transport"] == transport && r["clients"] == clients && r["warmup"] == "false").ToList();
                Assert.AreEqual((2, 2), (runs.Count, runs.Count(r => r["verified"] == "true")), $"{transport} at {clients} client(s)");
            }
        }
        var results = ResultsJson.Load(Path.Combine(project, "artifacts", "results"));
        CollectionAssert.IsSubsetOf(new[] { "MyTransport", "PipelinedCopy", "GrpcClient", "MyTransport (2 clients)", "PipelinedCopy (2 clients)", "GrpcClient (2 clients)" },
            results.Summaries.Select(s => s.Transport).ToList());
        Assert.AreEqual(version, results.Environment["IntegrationTasksVersion"], "the report says which version measured");
        StringAssert.Contains(File.ReadAllText(Path.Combine(project, "artifacts", "results", "report.html")), "\"transport\":\"MyTransport\"", "in the explorer's data");
        Assert.Contains("MyTransportServer stopped", File.ReadAllText(Path.Combine(project, "artifacts", "logs", "MyTransportServer.log")), "its server by its own name");

        var faulted = RepositoryPaths.Run("dotnet", Build("-t:RunAll", "-p:Transports=MyTransport+PipelinedCopy", "-p:RecordCounts=20000", "-p:Fault=Reset",
            "-p:FaultAfterBytes=200000", "-p:Clients=2", "-p:Repetitions=1", "-p:WarmupRuns=1"), environment, project);
        Assert.AreEqual(0, faulted.ExitCode, faulted.Stdout);
        var resumed = Measured(project).Where(r => r["transport"] == "MyTransport").ToList();
        Assert.HasCount(2, resumed);
        Assert.IsTrue(resumed.All(r => r["fault"] == "Reset" && r["verified"] == "true" && int.Parse(r["reconnects"]) >= 1), "reset, resumed, every row verified");

        var library = Path.Combine(project, "MyTransport", "bin", "Release", "net10.0", "MyTransport.dll");
        var builtAt = File.GetLastWriteTimeUtc(library);
        var again = RepositoryPaths.Run("dotnet", ["msbuild", "-t:BuildTasks", "-v:n", "-nologo"], environment, project);
        Assert.AreEqual(0, again.ExitCode, again.Stdout);
        StringAssert.Contains(again.Stdout, "Skipping target \"BuildTransports\" because all output files are up-to-date");
        Assert.AreEqual(builtAt, File.GetLastWriteTimeUtc(library), "nothing rebuilt");
    }

    [GeneratedRegex(@"<!-- commands: (?<name>[\w-]+) -->\n```sh\n(?<code>.*?)\n```", RegexOptions.Singleline)]
    private static partial Regex CommandBlock();

    [TestMethod]
    public void A_build_in_this_repository_leaves_no_process_holding_the_task_assembly()
    {
        using var artifacts = new TempDirectory("it-nodes-");
        var assembly = Path.Combine(RepositoryPaths.Root, "tasks", "IntegrationTasks", "bin", HostingTests.Configuration, "net10.0", "IntegrationTasks.dll");

        var run = RepositoryPaths.Run("dotnet", TestBuild.Arguments("RunAll", artifacts, "-p:Transports=TcpClient2+PipelinedCopy", "-p:RecordCounts=2000",
            "-p:Repetitions=1", "-p:Warmup=false", "-p:Peers=false"));

        Assert.AreEqual(0, run.ExitCode, run.Stdout);
        StringAssert.Contains(run.Stdout, "TcpClient2 2,000 records, repetition 1 of 1:", "the task assembly was loaded, in nodes and in a server");
        Assert.IsEmpty(ProcessesMapping(assembly), "a reused node would keep the task assembly loaded: a rebuild would not reach it");
    }

    private static string[] Build(params string[] arguments) =>
        ["msbuild", .. arguments, "-nologo", "-p:Calibrate=false", $"-p:MyTransportPort={TestPorts.Free()}", .. TestBuild.PortProperties.Select(p => $"-p:{p}={TestPorts.Free()}")];

    private static void CheckSdkPackage(string package, string version)
    {
        using var zip = ZipFile.OpenRead(package);
        var names = zip.Entries.Select(e => e.FullName).ToArray();
        CollectionAssert.IsSubsetOf(new[]
        {
            "Sdk/Sdk.props", "Sdk/Sdk.targets", "Sdk/Version.props", "targets/IntegrationTasks.props", "targets/ExternalTransports.targets", "targets/Tcp/Tcp.targets",
            "tasks/net10.0/IntegrationTasks.dll", "tasks/net10.0/IntegrationTasks.deps.json", "tasks/net10.0/IntegrationTasks.Abstractions.dll",
            "tasks/net10.0/runtimes/linux-x64/native/libe_sqlite3.so", "tasks/net10.0/runtimes/linux-arm64/native/libe_sqlite3.so",
            "tasks/net10.0/IntegrationTasks.Host.dll", "tasks/net10.0/IntegrationTasks.Host.runtimeconfig.json", "README.md", "LICENSE",
        }, names);
        // Lean: the task assembly and the host share one folder, and only the runtimes the suite supports carry native assets.
        Assert.IsFalse(names.Any(n => n.StartsWith("host/", StringComparison.Ordinal)), "one copy of what tasks and host share");
        CollectionAssert.AreEquivalent(new[] { "linux-arm64", "linux-x64", "unix" },
            names.Where(n => n.StartsWith("tasks/net10.0/runtimes/", StringComparison.Ordinal)).Select(n => n.Split('/')[3]).Distinct().ToArray());
        Assert.IsFalse(names.Any(n => n.StartsWith("lib/", StringComparison.Ordinal)), "nothing in it is referenced");
        using var nuspec = zip.Entries.Single(e => e.FullName.EndsWith(".nuspec", StringComparison.Ordinal)).Open();
        var metadata = XDocument.Load(nuspec).Root!.Elements().Single(e => e.Name.LocalName == "metadata");
        string Value(string name) => metadata.Elements().Single(e => e.Name.LocalName == name).Value;
        Assert.AreEqual((version, "true", "MIT"), (Value("version"), Value("developmentDependency"), Value("license")));
        Assert.AreEqual("MSBuildSdk", metadata.Descendants().Single(e => e.Name.LocalName == "packageType").Attribute("name")!.Value);
        Assert.IsFalse(metadata.Descendants().Any(e => e.Name.LocalName == "dependency"), "a task's dependencies travel inside it");
        var repository = metadata.Elements().Single(e => e.Name.LocalName == "repository");
        Assert.AreEqual(40, repository.Attribute("commit")!.Value.Length, "the commit it was packed from");
        Assert.IsTrue(Uri.IsWellFormedUriString(repository.Attribute("url")?.Value, UriKind.Absolute) && Uri.IsWellFormedUriString(Value("projectUrl"), UriKind.Absolute),
            "where it comes from");
    }

    private static List<Dictionary<string, string>> Measured(string project)
    {
        var lines = File.ReadAllLines(Path.Combine(project, "artifacts", "results", "results.csv"));
        var header = lines[0].Split(',');
        return [.. lines.Skip(1).Select(l => header.Zip(l.Split(',')).ToDictionary(p => p.First, p => p.Second)).Where(r => r["status"] == "measured")];
    }

    /// <summary>Processes other than this one that have the file mapped (loaded).</summary>
    private static List<int> ProcessesMapping(string file) =>
    [
        .. Directory.EnumerateDirectories("/proc")
            .Select(d => (Id: int.TryParse(Path.GetFileName(d), out var id) ? id : 0, Maps: Path.Combine(d, "maps")))
            .Where(p => p.Id > 0 && p.Id != Environment.ProcessId)
            .Where(p =>
            {
                try
                {
                    return File.ReadLines(p.Maps).Any(line => line.EndsWith(file, StringComparison.Ordinal));
                }
                catch (Exception e) when (e is IOException or UnauthorizedAccessException)
                {
                    return false; // gone meanwhile
                }
            })
            .Select(p => p.Id),
    ];
}
