namespace IntegrationTasks.Tests;

/// <summary>
/// Every target but RunAll builds the task assemblies only when they are missing or older than their sources (a lab run after a pull
/// used to run the old DLL). Driven on a tree of its own (IntegrationTasksRoot): a source file, and a host project whose "build"
/// writes both DLLs and counts itself, so the suite's own DLLs are never touched.
/// </summary>
[TestClass]
[TestCategory("EndToEnd")]
public sealed class TaskBuildTests
{
    private const string CountingHostProject = """
        <Project DefaultTargets="Build">
          <Target Name="Restore" />
          <Target Name="Build">
            <MakeDir Directories="$(MSBuildThisFileDirectory)bin/$(Configuration)/net10.0;$(MSBuildThisFileDirectory)../IntegrationTasks/bin/$(Configuration)/net10.0" />
            <Touch Files="$(MSBuildThisFileDirectory)bin/$(Configuration)/net10.0/IntegrationTasks.Host.dll;$(MSBuildThisFileDirectory)../IntegrationTasks/bin/$(Configuration)/net10.0/IntegrationTasks.dll" AlwaysCreate="true" />
            <WriteLinesToFile File="$(MSBuildThisFileDirectory)builds.txt" Lines="built" />
          </Target>
        </Project>
        """;

    [TestMethod]
    public void The_quick_profile_selects_the_transport_each_family_marks_and_an_unknown_profile_is_refused()
    {
        var (code, stdout, stderr) = RepositoryPaths.Run("dotnet", ["msbuild", RepositoryPaths.BuildProject, "-nologo", "-t:_SelectTransports", "-p:Profile=Quick",
            "-getItem:SelectedTransport", "-getProperty:RecordCounts", "-getProperty:Repetitions"]);
        Assert.AreEqual(0, code, stderr + stdout);
        using var json = System.Text.Json.JsonDocument.Parse(stdout);
        var selected = json.RootElement.GetProperty("Items").GetProperty("SelectedTransport").EnumerateArray()
            .Select(i => (Name: i.GetProperty("Identity").GetString()!, Family: i.GetProperty("Family").GetString()!)).ToList();
        CollectionAssert.AreEquivalent(new[] { "Baseline", "Baseline", "Files", "Grpc", "Http", "Queues", "Rest", "Tcp", "Wcf", "WebSockets" },
            selected.Select(s => s.Family).ToArray(), string.Join(", ", selected));
        CollectionAssert.IsSubsetOf(new[] { "DirectCopy", "PipelinedCopy", "TcpClient2" }, selected.Select(s => s.Name).ToArray());
        Assert.AreEqual(("20000", "5"), (json.RootElement.GetProperty("Properties").GetProperty("RecordCounts").GetString(),
            json.RootElement.GetProperty("Properties").GetProperty("Repetitions").GetString()));

        (code, stdout, _) = RepositoryPaths.Run("dotnet", ["msbuild", RepositoryPaths.BuildProject, "-nologo", "-t:_SelectTransports", "-p:Profile=Fast"]);
        Assert.AreNotEqual(0, code);
        StringAssert.Contains(stdout, "error IT1001: Profile must be Quick");
    }

    [TestMethod]
    public void The_run_s_state_lives_in_the_results_folder_and_the_dated_copies_in_one_history_folder_under_artifacts()
    {
        var (code, stdout, stderr) = RepositoryPaths.Run("dotnet", ["msbuild", RepositoryPaths.BuildProject, "-nologo", "-getProperty:RunStateDir", "-getProperty:HistoryDir"]);
        Assert.AreEqual(0, code, stderr);
        using var json = System.Text.Json.JsonDocument.Parse(stdout);
        var properties = json.RootElement.GetProperty("Properties");
        Assert.AreEqual((Path.Combine(RepositoryPaths.Root, "artifacts", "results", "state"), Path.Combine(RepositoryPaths.Root, "artifacts", "history")),
            (Path.TrimEndingDirectorySeparator(Path.GetFullPath(properties.GetProperty("RunStateDir").GetString()!)),
             Path.TrimEndingDirectorySeparator(Path.GetFullPath(properties.GetProperty("HistoryDir").GetString()!))));
    }

    [TestMethod]
    public void A_target_builds_the_tasks_when_a_source_is_newer_or_a_DLL_is_missing_and_not_otherwise()
    {
        using var root = new TempDirectory("it-taskbuild-");
        var source = Path.Combine(root, "tasks", "IntegrationTasks", "Labs", "Stage.cs");
        var host = Path.Combine(root, "tasks", "IntegrationTasks.Host");
        Directory.CreateDirectory(Path.GetDirectoryName(source)!);
        Directory.CreateDirectory(host);
        File.WriteAllText(source, "// a source");
        File.WriteAllText(Path.Combine(host, "IntegrationTasks.Host.csproj"), CountingHostProject);
        var builds = Path.Combine(host, "builds.txt");
        int Builds() => File.Exists(builds) ? File.ReadAllLines(builds).Length : 0;

        // No DLL yet: built, and said so.
        var output = Ensure(root);
        Assert.AreEqual(1, Builds(), output);
        StringAssert.Contains(output, "Building the task assemblies (Release) first");
        StringAssert.Contains(output, "Task assemblies built (Release).");
        Assert.DoesNotContain("Build succeeded", output[output.IndexOf("Building the task", StringComparison.Ordinal)..], "the inner build's summary read as the end of the run");
        var stamp = Path.Combine(host, "bin", "Release", "net10.0", "tasks-built.stamp");
        Assert.IsTrue(File.Exists(stamp), output);

        // Nothing changed: not built again (what a client run by hand finds after a RunAll).
        output = Ensure(root);
        Assert.AreEqual(1, Builds(), output);
        Assert.DoesNotContain("Building the task assemblies", output);

        // A source edited after the last build (a pull, an edit): built.
        File.SetLastWriteTimeUtc(source, File.GetLastWriteTimeUtc(stamp).AddSeconds(10));
        output = Ensure(root);
        Assert.AreEqual(2, Builds(), output);

        // Told not to build (the tests, a server started by a build): not built, whatever the times.
        File.SetLastWriteTimeUtc(source, File.GetLastWriteTimeUtc(stamp).AddSeconds(10));
        output = Ensure(root, "-p:SkipTasksBuild=true");
        Assert.AreEqual(2, Builds(), output);
        Assert.DoesNotContain("Building the task assemblies", output);
        output = Ensure(root);
        Assert.AreEqual(3, Builds(), output);
        File.SetLastWriteTimeUtc(source, File.GetLastWriteTimeUtc(stamp).AddMinutes(-1));
        output = Ensure(root);
        Assert.AreEqual(3, Builds(), output);

        // A DLL deleted, the stamp still there: built.
        File.Delete(Path.Combine(root, "tasks", "IntegrationTasks", "bin", "Release", "net10.0", "IntegrationTasks.dll"));
        output = Ensure(root);
        Assert.AreEqual(4, Builds(), output);
        // A file under bin or obj is no source.
        var generated = Path.Combine(root, "tasks", "IntegrationTasks", "obj", "Release", "net10.0", "Generated.cs");
        Directory.CreateDirectory(Path.GetDirectoryName(generated)!);
        File.WriteAllText(generated, "// generated");
        File.SetLastWriteTimeUtc(generated, File.GetLastWriteTimeUtc(stamp).AddSeconds(10));
        output = Ensure(root);
        Assert.AreEqual(4, Builds(), output);
    }

    private static string Ensure(string root, params string[] properties)
    {
        var (exitCode, stdout, stderr) = RepositoryPaths.Run("dotnet",
            ["msbuild", RepositoryPaths.BuildProject, "-t:_EnsureTasksBuilt", "-nologo", "-tl:off", "-p:Configuration=Release", $"-p:IntegrationTasksRoot={root}/", .. properties]);
        Assert.AreEqual(0, exitCode, stdout + stderr);
        return stdout + stderr;
    }
}
