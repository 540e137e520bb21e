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
        var entry = notebook.Split("\n### ").FirstOrDefault(e => e.Contains(stamp.Commit, StringComparison.Ordinal) && e.StartsWith(stamp.Date[..10], StringComparison.Ordinal));
        Assert.IsNotNull(entry, $"docs/results.md has no entry dated {stamp.Date[..10]} naming commit {stamp.Commit}");
        // Its current results are the same run's, written by the same command.
        var current = notebook[notebook.IndexOf(WriteFrontDoor.CurrentBegin, StringComparison.Ordinal)..notebook.IndexOf(WriteFrontDoor.CurrentEnd, StringComparison.Ordinal)];
        StringAssert.Contains(current, $"on {stamp.Date} UTC, commit `{stamp.Commit}`");
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

    [TestMethod]
    public void Interleaved_findings_give_each_paired_ratio_its_interval_and_mark_what_noise_cannot_tell_apart()
    {
        // Three interleaved rounds: each run over the reference run of its round.
        static IEnumerable<Measurement> Rounds(string transport, RunKind kind, params double[] seconds) =>
            seconds.Select((s, i) => new Measurement
            {
                Transport = transport, Kind = kind, Records = 50_000, BatchSize = 1000, Repetition = i + 1, ElapsedSeconds = s, Verified = true, RoundSeed = 7,
                Timestamp = new DateTimeOffset(2026, 12, 7, 10, 0, 0, TimeSpan.Zero).AddMinutes(i * 10 + (kind == RunKind.Reference ? 0 : 1)),
            });
        var runs = Rounds("PipelinedCopy", RunKind.Reference, 1.0, 1.0, 1.0).Concat(Rounds("GrpcClient", RunKind.Transport, 1.19, 1.2, 1.21))
            .Concat(Rounds("TcpClient2", RunKind.Transport, 1.1, 1.25, 1.4)).Concat(Rounds("HttpRequest", RunKind.Transport, 2.0, 2.0, 2.0)).ToList();
        var summaries = Summaries.Of(runs).ToDictionary(s => s.Transport);
        var (grpc, tcp, http) = (ReferenceRatio.Of(summaries["GrpcClient"])!, ReferenceRatio.Of(summaries["TcpClient2"])!, ReferenceRatio.Of(summaries["HttpRequest"])!);
        Assert.AreEqual((true, 1.2, true), (grpc.Paired, grpc.Value, grpc.Ci95 > 0), "paired, with an interval");
        Assert.AreEqual((true, false), (tcp.WithinNoiseOf(grpc), http.WithinNoiseOf(tcp)));
        Assert.IsNull(ReferenceRatio.Of(summaries["PipelinedCopy"]), "the reference has no ratio to itself");
        var block = WriteFrontDoor.Block(new ResultsFile(new Dictionary<string, string>(), runs),
            new Dictionary<string, string> { ["GrpcClient"] = "Grpc", ["TcpClient2"] = "Tcp", ["HttpRequest"] = "Http" },
            new RunStamp("2026-12-07 10:00:00", "abc123def456", "dotnet msbuild build.proj -t:RunAll", "2-core Linux"));
        var best = block.Split('\n').Single(l => l.Contains("Each family's best", StringComparison.Ordinal));
        StringAssert.Contains(best, $"Grpc {grpc.Figure()} (`GrpcClient`); Tcp {tcp.Figure()} (`TcpClient2`), within noise; Http {http.Figure()} (`HttpRequest`).");
        var current = WriteFrontDoor.CurrentResults(new ResultsFile(new Dictionary<string, string>(), runs),
            new Dictionary<string, string> { ["GrpcClient"] = "Grpc", ["TcpClient2"] = "Tcp", ["HttpRequest"] = "Http" },
            new RunStamp("2026-12-07 10:00:00", "abc123def456", "dotnet msbuild build.proj -t:RunAll", "2-core Linux"));
        var table = MarkdownTable.With(current, "Against the one above");
        Assert.AreEqual(("the fastest", "within noise", "slower"),
            (table.Cell("`GrpcClient`", "Against the one above"), table.Cell("`TcpClient2`", "Against the one above"), table.Cell("`HttpRequest`", "Against the one above")));
    }
}
