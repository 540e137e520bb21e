namespace IntegrationTasks.Tests;

/// <summary>Wrong settings get advice about what the user typed, with its code, before anything runs.</summary>
[TestClass]
[TestCategory("EndToEnd")]
public sealed class UserErrorTests
{
    [TestMethod]
    [DataRow("GenerateData", "-p:Provider=Oracle", "error IT1002: Unknown database provider 'Oracle' (from -p:Provider). Use Sqlite, PostgreSql or SqlServer.")]
    [DataRow("DirectCopy", "-p:ClientProvider=Mongo", "error IT1002: Unknown database provider 'Mongo' (from -p:ClientProvider).")]
    [DataRow("GenerateData", "-p:BatchSize=-5", "error IT1001: BatchSize must be a whole number of at least 1 (was -5).")]
    [DataRow("DirectCopy", "-p:Records=1500", "error IT1001: Records (1500) must be a multiple of BatchSize (1000): for example 1000 or 2000.")]
    public void A_wrong_setting_is_named_as_the_user_typed_it(string target, string setting, string expected)
    {
        // Before: an unknown provider was told to "set -p:ServerConnString"; a negative BatchSize named Records; Records not a
        // multiple of BatchSize named TotalBatches, which the user never set.
        using var artifacts = new TempDirectory("it-usererror-");
        var (exitCode, output) = HostingTests.RunBuild(target, artifacts, setting);
        Assert.AreNotEqual(0, exitCode, output);
        StringAssert.Contains(output, expected);
        Assert.DoesNotContain("TotalBatches", output.Split('\n').Where(l => l.Contains(": error ", StringComparison.Ordinal)).FirstOrDefault() ?? "");
    }
}
