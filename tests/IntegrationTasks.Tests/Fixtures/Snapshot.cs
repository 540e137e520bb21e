namespace IntegrationTasks.Tests;

/// <summary>
/// Wording kept in files under Snapshots/: a test renders its text and compares it with the file. After a deliberate change:
///   UPDATE_SNAPSHOTS=1 dotnet test tests/IntegrationTasks.Tests --filter TestCategory=Snapshot
/// and read the diff before committing it.
/// </summary>
internal static class Snapshot
{
    public static void AssertMatches(string name, string actual)
    {
        // ".snap": what a snapshot holds is output to compare, not a source of the suite (an editor or linter takes report.html for a page).
        var snapshot = Path.Combine(RepositoryPaths.Root, "tests", "IntegrationTasks.Tests", "Snapshots", name + ".snap");
        if (Environment.GetEnvironmentVariable("UPDATE_SNAPSHOTS") == "1")
            File.WriteAllText(snapshot, actual);
        Assert.IsTrue(File.Exists(snapshot), $"No snapshot at {snapshot}: make it with UPDATE_SNAPSHOTS=1.");
        Assert.AreEqual(File.ReadAllText(snapshot), actual, $"Wording changed in {name}: UPDATE_SNAPSHOTS=1 refreshes it.");
    }
}
