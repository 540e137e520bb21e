namespace IntegrationTasks.Tests;

/// <summary>Wrong settings get advice about what the user typed, with its code, before anything runs.</summary>
[TestClass]
[TestCategory("EndToEnd")]
public sealed class UserErrorTests
{
    [TestMethod]
    [DataRow("GenerateData", "-p:Provider=Oracle", "IT1002", "'Oracle' (from -p:Provider)")]
    [DataRow("DirectCopy", "-p:ClientProvider=Mongo", "IT1002", "'Mongo' (from -p:ClientProvider)")]
    [DataRow("GenerateData", "-p:BatchSize=-5", "IT1001", "BatchSize", "(was -5)")]
    [DataRow("DirectCopy", "-p:Records=1500", "IT1001", "Records (1500)", "BatchSize (1000)", "1000 or 2000")]
    // A provider with a private server of the suite's: the command that starts it and prints the connection string.
    [DataRow("GenerateData", "-p:Provider=MariaDb", "IT1001", "provider MariaDb", "ServerConnString=$(bash ", "scripts/mariadb.sh start)")]
    [DataRow("DirectCopy", "-p:ClientProvider=Postgres", "IT1001", "provider Postgres", "ClientConnString=$(bash ", "scripts/postgres.sh start)")]
    public void A_wrong_setting_is_named_as_the_user_typed_it(string target, string setting, string code, params string[] named)
    {
        // Before: an unknown provider was told to "set -p:ServerConnString"; a negative BatchSize named Records; Records not a
        // multiple of BatchSize named TotalBatches, which the user never set.
        using var artifacts = new TempDirectory("it-usererror-");
        var (exitCode, output) = HostingTests.RunBuild(target, artifacts, setting);
        Assert.AreNotEqual(0, exitCode, output);
        var error = output.Split('\n').FirstOrDefault(l => l.Contains($"error {code}: ", StringComparison.Ordinal)) ?? "";
        foreach (var typed in named)
            StringAssert.Contains(error, typed, output);
        Assert.DoesNotContain("TotalBatches", output.Split('\n').Where(l => l.Contains(": error ", StringComparison.Ordinal)).FirstOrDefault() ?? "");
    }
}
