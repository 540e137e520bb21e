namespace IntegrationTasks.Tests;

/// <summary>
/// What a person sees in an interactive terminal: the build runs under a pseudo-terminal (util-linux's <c>script</c>, with a
/// window size, as in a real terminal), so .NET's terminal logger takes over the screen as it does for a user.
/// </summary>
[TestClass]
[TestCategory("EndToEnd")]
public sealed class TerminalTests
{
    [TestMethod]
    [Timeout(300_000, CooperativeCancellation = true)] // two builds: data generation and one client run
    public void A_client_run_in_an_interactive_terminal_shows_its_time_and_its_verification()
    {
        using var artifacts = new TempDirectory("it-terminal-");
        var (exitCode, output) = HostingTests.RunBuild("GenerateData", artifacts, "-p:Records=500");
        Assert.AreEqual(0, exitCode, output);

        var screen = RunInTerminal("-t:DirectCopy", "-nologo", $"-p:Configuration={HostingTests.Configuration}", "-p:SkipTasksBuild=true",
            $"-p:ArtifactsDir={artifacts}/", "-p:TotalBatches=5", "-p:BatchSize=100");
        StringAssert.Contains(screen, "Verified: ClientTable equals ServiceTable for all 500 IDs.");
        StringAssert.Matches(screen, new System.Text.RegularExpressions.Regex(@"DirectCopy: total processing time \d+\.\d{3} s"));
    }

    [TestMethod]
    [Timeout(300_000, CooperativeCancellation = true)] // one small RunAll
    public void RunAll_in_an_interactive_terminal_shows_its_plan_its_progress_and_its_summary()
    {
        using var artifacts = new TempDirectory("it-terminal-runall-");
        var screen = RunInTerminal("-t:RunAll", "-nologo", $"-p:Configuration={HostingTests.Configuration}", "-p:SkipTasksBuild=true",
            $"-p:ArtifactsDir={artifacts}/", "-p:Transports=DirectCopy+PipelinedCopy", "-p:RecordCounts=1000", "-p:Repetitions=1", "-p:Peers=false", "-p:Calibrate=false");
        StringAssert.Contains(screen, "RunAll plan: 2 transports (DirectCopy, PipelinedCopy)");
        StringAssert.Contains(screen, "× 1000 records × 1 repetitions");
        // Interleaved: the warm-ups (three rounds of them), then the one round, a line before each run.
        StringAssert.Contains(screen, "RunAll warm-ups, run 1 of 6: DirectCopy, 1,000 records;");
        StringAssert.Contains(screen, "RunAll round 1 of 1, run 2 of 2: ");
        // One line a run (its time, verified), not the client's own three lines again.
        StringAssert.Matches(screen, new System.Text.RegularExpressions.Regex(@"DirectCopy 1,000 records, repetition 1 of 1: \d+\.\d{3} s, "));
        StringAssert.Matches(screen, new System.Text.RegularExpressions.Regex(@"of 1: \d+\.\d{3} s, [\d,]+ records/s, verified\."));
        Assert.DoesNotContain("DirectCopy: total processing time", screen);
        StringAssert.Contains(screen, "Results (8 verified runs):"); // warm-ups included
        StringAssert.Contains(screen, "Report: ");
    }

    /// <summary>Runs <c>dotnet msbuild build.proj</c> with these arguments on a 120 × 40 pseudo-terminal; returns what it printed.</summary>
    internal static string RunInTerminal(params string[] arguments)
    {
        var command = "stty cols 120 rows 40; exec dotnet msbuild " + Quote(RepositoryPaths.BuildProject) + " " + string.Join(' ', arguments.Select(Quote));
        var (exitCode, stdout, stderr) = RepositoryPaths.Run("script", ["-qec", command, "/dev/null"],
            // The test host's own build tells the builds below it to keep the terminal logger off (_MSBUILDTLENABLED=0,
            // MSBUILDENSURESTDOUTFORTASKPROCESSES=1): a person's shell does not.
            new Dictionary<string, string?>
            {
                ["TERM"] = "xterm-256color", ["_MSBUILDTLENABLED"] = null, ["MSBUILDENSURESTDOUTFORTASKPROCESSES"] = null,
            });
        Assert.AreEqual(0, exitCode, stdout + stderr);
        return stdout;
    }

    private static string Quote(string argument) => "'" + argument.Replace("'", "'\\''") + "'";
}
