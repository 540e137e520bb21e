namespace IntegrationTasks.Tests;

/// <summary>A build's run state, owned by the MSBuild process that made it first; a second process's own one says so.</summary>
[TestClass]
[TestCategory("Unit")]
public sealed class RunStateTests
{
    [TestMethod]
    public void A_state_made_while_another_live_process_owns_the_folder_names_that_process_and_otherwise_takes_the_folder()
    {
        using var folder = new TempDirectory("it-runstate-");
        var log = Path.Combine(folder.Path, "runs.jsonl");
        var marker = Path.Combine(folder.Path, "state", "owner.pid");

        // The first state of a build takes the folder.
        Assert.IsNull(RunState.For(new FakeBuildEngine(), log).OtherProcess);
        Assert.AreEqual(Environment.ProcessId.ToString(System.Globalization.CultureInfo.InvariantCulture), File.ReadAllText(marker));

        // Another live MSBuild process owns it (a second node): this state is a second one, and says whose the build's is.
        using var other = Process.Start(new ProcessStartInfo("sleep", "30"))!;
        try
        {
            File.WriteAllText(marker, other.Id.ToString(System.Globalization.CultureInfo.InvariantCulture));
            Assert.AreEqual(other.Id, RunState.For(new FakeBuildEngine(), log).OtherProcess);
        }
        finally
        {
            other.Kill();
            other.WaitForExit();
        }
        // An owner that has ended left the marker behind: taken over.
        Assert.IsNull(RunState.For(new FakeBuildEngine(), log).OtherProcess);
    }
}
