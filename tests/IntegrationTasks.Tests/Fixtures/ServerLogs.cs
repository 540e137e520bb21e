namespace IntegrationTasks.Tests;

/// <summary>
/// What the servers of a test wrote: every problem a client can cause is told with its code. A line with IT9999 (an error no one
/// expected) or an uncoded "crit:"/"fail:" line of ASP.NET Core's console logger fails the test that collected it.
/// </summary>
internal static partial class ServerLogs
{
    [GeneratedRegex(@"(^|\] )(crit|fail): ", RegexOptions.Multiline)]
    private static partial Regex UncodedSevereLine();

    public static void AssertEveryProblemCoded(string log, string source = "the server's log")
    {
        var lines = log.Split('\n').Where(l => l.Contains(ErrorCodes.Unexpected, StringComparison.Ordinal) || UncodedSevereLine().IsMatch(l)).ToList();
        Assert.IsEmpty(lines, $"{source}: lines with {ErrorCodes.Unexpected} or uncoded crit/fail:\n{string.Join("\n", lines)}");
    }

    /// <summary>Every server log a build wrote into its artifacts (logs/*.log).</summary>
    public static void AssertEveryProblemCodedIn(string artifacts)
    {
        var logs = Path.Combine(artifacts, "logs");
        if (!Directory.Exists(logs))
            return;
        foreach (var file in Directory.EnumerateFiles(logs, "*.log"))
            AssertEveryProblemCoded(File.ReadAllText(file), file);
    }
}
