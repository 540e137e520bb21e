using System.IO.Compression;
using System.Xml.Linq;

namespace IntegrationTasks.Tests;

/// <summary>
/// The suite as a package: packed to a folder feed with a version of its own, the sample (samples/MeasureMyTransport) copied out of
/// the repository, restored from that feed only into a packages folder of its own, and its RunAll measuring its own transport beside
/// two of the suite's — verified, ranked, under many clients and a fault; a second build rebuilds nothing. Alone: the sample's
/// builds are heavy, and packing reads the task assemblies every other test uses.
/// </summary>
[TestClass]
[DoNotParallelize]
public sealed class PackageTests
{
    private static readonly string Sample = Path.Combine(RepositoryPaths.Root, "samples", "MeasureMyTransport");

    [TestMethod]
    public void The_packed_sdk_measures_a_transport_of_another_repository_beside_the_suites_own()
    {
        using var work = new TempDirectory("it-package-");
        var version = $"0.3.0-test.{DateTime.UtcNow:yyyyMMddHHmmss}.{Environment.ProcessId}";
        var feed = Path.Combine(work, "feed");
        var sample = Path.Combine(work, "MeasureMyTransport");
        var environment = new Dictionary<string, string?> { ["NUGET_PACKAGES"] = Path.Combine(work, "packages") };

        var pack = RepositoryPaths.Run("dotnet", ["pack", "tasks/IntegrationTasks.Sdk", "-c", HostingTests.Configuration, "--no-build", "-o", feed,
            $"-p:PackageVersion={version}", "-nologo"]);
        Assert.AreEqual(0, pack.ExitCode, pack.Stdout + pack.Stderr);
        CheckSdkPackage(Path.Combine(feed, $"IntegrationTasks.Sdk.{version}.nupkg"), version);
        using (var seam = ZipFile.OpenRead(Path.Combine(feed, $"IntegrationTasks.Abstractions.{version}.nupkg")))
            CollectionAssert.AreEquivalent(new[] { "lib/net10.0/IntegrationTasks.Abstractions.dll", "lib/net10.0/IntegrationTasks.Abstractions.xml" },
                seam.Entries.Select(e => e.FullName).Where(n => n.StartsWith("lib/", StringComparison.Ordinal)).ToArray());

        CopySample(sample);
        File.WriteAllText(Path.Combine(sample, "nuget.config"),
            $"""<configuration><packageSources><clear /><add key="feed" value="{feed}" /></packageSources></configuration>""");
        File.WriteAllText(Path.Combine(sample, "global.json"), $$"""{ "msbuild-sdks": { "IntegrationTasks.Sdk": "{{version}}" } }""");

        var run = RepositoryPaths.Run("dotnet", Build("-t:RunAll", "-p:Transports=MyTransport+PipelinedCopy+GrpcClient", "-p:RecordCounts=4000",
            "-p:Clients=1+2", "-p:Repetitions=2", "-p:WarmupRuns=1"), environment, sample);
        Assert.AreEqual(0, run.ExitCode, run.Stdout);
        Assert.IsTrue(Directory.Exists(Path.Combine(work, "packages", "integrationtasks.sdk", version)), "the SDK restored from the feed into its own folder");

        var rows = Measured(sample);
        foreach (var transport in new[] { "MyTransport", "PipelinedCopy", "GrpcClient" })
        {
            foreach (var clients in new[] { "1", "2" })
            {
                var runs = rows.Where(r => r["transport"] == transport && r["clients"] == clients && r["warmup"] == "false").ToList();
                Assert.AreEqual((2, 2), (runs.Count, runs.Count(r => r["verified"] == "true")), $"{transport} at {clients} client(s)");
            }
        }
        var ranked = ResultsJson.Load(Path.Combine(sample, "artifacts", "results")).Summaries.Select(s => s.Transport).ToList();
        CollectionAssert.IsSubsetOf(new[] { "MyTransport", "PipelinedCopy", "GrpcClient", "MyTransport (2 clients)", "PipelinedCopy (2 clients)", "GrpcClient (2 clients)" },
            ranked);
        StringAssert.Contains(File.ReadAllText(Path.Combine(sample, "artifacts", "results", "report.html")), "\"transport\":\"MyTransport\"", "in the explorer's data");
        Assert.Contains("MyTransportServer stopped", File.ReadAllText(Path.Combine(sample, "artifacts", "logs", "MyTransportServer.log")), "its server by its own name");

        var faulted = RepositoryPaths.Run("dotnet", Build("-t:RunAll", "-p:Transports=MyTransport+PipelinedCopy", "-p:RecordCounts=20000", "-p:Fault=Reset",
            "-p:FaultAfterBytes=200000", "-p:Clients=2", "-p:Repetitions=1", "-p:WarmupRuns=1"), environment, sample);
        Assert.AreEqual(0, faulted.ExitCode, faulted.Stdout);
        var resumed = Measured(sample).Where(r => r["transport"] == "MyTransport").ToList();
        Assert.HasCount(2, resumed);
        Assert.IsTrue(resumed.All(r => r["fault"] == "Reset" && r["verified"] == "true" && int.Parse(r["reconnects"]) >= 1), "reset, resumed, every row verified");

        var library = Path.Combine(sample, "MyTransport", "bin", "Release", "net10.0", "MyTransport.dll");
        var builtAt = File.GetLastWriteTimeUtc(library);
        var again = RepositoryPaths.Run("dotnet", ["msbuild", "-t:BuildTasks", "-v:n", "-nologo"], environment, sample);
        Assert.AreEqual(0, again.ExitCode, again.Stdout);
        StringAssert.Contains(again.Stdout, "Skipping target \"BuildTransports\" because all output files are up-to-date");
        Assert.AreEqual(builtAt, File.GetLastWriteTimeUtc(library), "nothing rebuilt");
    }

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
            "tasks/net10.0/runtimes/linux-x64/native/libe_sqlite3.so", "host/net10.0/IntegrationTasks.Host.dll", "host/net10.0/IntegrationTasks.Host.runtimeconfig.json",
            "README.md", "LICENSE",
        }, names);
        Assert.IsFalse(names.Any(n => n.StartsWith("lib/", StringComparison.Ordinal)), "nothing in it is referenced");
        using var nuspec = zip.Entries.Single(e => e.FullName.EndsWith(".nuspec", StringComparison.Ordinal)).Open();
        var metadata = XDocument.Load(nuspec).Root!.Elements().Single(e => e.Name.LocalName == "metadata");
        string Value(string name) => metadata.Elements().Single(e => e.Name.LocalName == name).Value;
        Assert.AreEqual((version, "true", "MIT"), (Value("version"), Value("developmentDependency"), Value("license")));
        Assert.AreEqual("MSBuildSdk", metadata.Descendants().Single(e => e.Name.LocalName == "packageType").Attribute("name")!.Value);
        Assert.IsFalse(metadata.Descendants().Any(e => e.Name.LocalName == "dependency"), "a task's dependencies travel inside it");
        Assert.AreEqual(40, metadata.Elements().Single(e => e.Name.LocalName == "repository").Attribute("commit")!.Value.Length, "the commit it was packed from");
    }

    private static void CopySample(string destination)
    {
        foreach (var file in Directory.EnumerateFiles(Sample, "*", SearchOption.AllDirectories))
        {
            var relative = Path.GetRelativePath(Sample, file);
            if (relative.Split(Path.DirectorySeparatorChar).Any(part => part is "bin" or "obj" or "artifacts"))
                continue;
            Directory.CreateDirectory(Path.GetDirectoryName(Path.Combine(destination, relative))!);
            File.Copy(file, Path.Combine(destination, relative));
        }
    }

    private static List<Dictionary<string, string>> Measured(string sample)
    {
        var lines = File.ReadAllLines(Path.Combine(sample, "artifacts", "results", "results.csv"));
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
