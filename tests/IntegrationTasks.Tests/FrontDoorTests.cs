namespace IntegrationTasks.Tests;

/// <summary>The README's findings and its picture come from one named run (scripts/pictures.sh), recorded in docs/results.md.</summary>
[TestClass]
[TestCategory("Unit")]
public sealed class FrontDoorTests
{
    private static string Root => RepositoryPaths.Root;

    [TestMethod]
    public void The_READMEs_findings_and_its_picture_name_the_same_run_and_the_notebook_has_it()
    {
        var stamp = JsonSerializer.Deserialize<RunStamp>(File.ReadAllText(Path.Combine(Root, "docs", "report-top.json")), IntegrationTasks.Common.JsonFiles.Options)!;
        var readme = File.ReadAllText(Path.Combine(Root, "README.md"));
        var block = readme[readme.IndexOf(WriteFrontDoor.Begin, StringComparison.Ordinal)..(readme.IndexOf(WriteFrontDoor.End, StringComparison.Ordinal) + WriteFrontDoor.End.Length)];
        // The sentence under the findings is the stamp's own: the same date, commit and command as the picture's run.
        StringAssert.Contains(block, stamp.Sentence);
        Assert.AreEqual("dotnet msbuild build.proj -t:RunAll", stamp.Command);
        Assert.DoesNotContain("uncommitted", stamp.Commit, "the run was made from a commit");
        // docs/results.md holds the run's entry: its date and commit.
        var notebook = File.ReadAllText(Path.Combine(Root, "docs", "results.md"));
        var entry = notebook.Split("\n## ").FirstOrDefault(e => e.Contains(stamp.Commit, StringComparison.Ordinal) && e.StartsWith(stamp.Date[..10], StringComparison.Ordinal));
        Assert.IsNotNull(entry, $"docs/results.md has no entry dated {stamp.Date[..10]} naming commit {stamp.Commit}");
        // Every figure of the README's findings is the run's: no other block of findings around it.
        Assert.AreEqual(1, readme.Split(WriteFrontDoor.Begin).Length - 1);
    }

    [TestMethod]
    [TestCategory("Snapshot")]
    public void The_findings_block_says_the_main_comparison_each_familys_best_and_the_cap_from_the_runs()
    {
        static IEnumerable<Measurement> At(int records, string transport, double seconds, RunKind kind = RunKind.Transport) =>
            Enumerable.Range(1, 3).Select(r => new Measurement
            {
                Transport = transport, Kind = kind, Records = records, BatchSize = 1000, Repetition = r, ElapsedSeconds = seconds, Verified = true,
            });
        var runs = At(5000, "PipelinedCopy", 0.1, RunKind.Reference).Concat(At(5000, "SoapSmallRequests", 2.5))
            .Concat(At(50_000, "PipelinedCopy", 1.0, RunKind.Reference)).Concat(At(50_000, "Peer: SQLite ATTACH", 0.2, RunKind.Peer))
            .Concat(At(50_000, "TcpClient2", 1.5)).Concat(At(50_000, "TcpClientSingleThreadTest", 2.5)).Concat(At(50_000, "GrpcClient", 1.2)).ToList();
        var stamp = new RunStamp("2026-11-29 02:00:00", "abc123def456", "dotnet msbuild build.proj -t:RunAll", "2-core Linux");
        var block = WriteFrontDoor.Block(new ResultsFile(new Dictionary<string, string>(), runs),
            new Dictionary<string, string> { ["TcpClient2"] = "Tcp", ["TcpClientSingleThreadTest"] = "Tcp", ["GrpcClient"] = "Grpc", ["SoapSmallRequests"] = "Wcf" }, stamp);
        var lines = block.Split('\n');
        Assert.AreEqual(WriteFrontDoor.Begin, lines[0]);
        // The figures, each where its finding says it; the wording is in Snapshots/front-door.md.snap.
        string[][] figures = [["50,000", "`GrpcClient`", "1.20×", "`TcpClientSingleThreadTest`", "2.50×"], ["`Peer: SQLite ATTACH`", "0.20×", "6.0×"],
            ["Grpc 1.20 (`GrpcClient`)", "Tcp 1.50 (`TcpClient2`)"], ["5,000", "`SoapSmallRequests` 25.0×"], ["21 measured runs", "3 rounds"]];
        for (var i = 0; i < figures.Length; i++)
            foreach (var figure in figures[i])
                StringAssert.Contains(lines[i + 1], figure);
        Snapshot.AssertMatches("front-door.md", block);
        Assert.AreEqual(stamp.Sentence, lines[7]);
        Assert.AreEqual(WriteFrontDoor.End, lines[8]);
    }
}
