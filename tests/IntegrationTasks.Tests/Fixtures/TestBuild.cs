namespace IntegrationTasks.Tests;

/// <summary>The command line every test build of <c>build.proj</c> starts from: the tasks the test run already built, the test's own
/// artifacts, and no calibration of the machine's noise (twenty seconds a RunAll; the tests that read it ask with <c>-p:Calibrate=true</c>).</summary>
internal static class TestBuild
{
    public static string[] Arguments(string target, string? artifacts, params IEnumerable<string> properties) =>
    [
        "msbuild", RepositoryPaths.BuildProject, $"-t:{target}", "-nologo", "-tl:off", $"-p:Configuration={HostingTests.Configuration}",
        "-p:SkipTasksBuild=true", .. artifacts is null ? Array.Empty<string>() : [$"-p:ArtifactsDir={artifacts}/"], "-p:Calibrate=false", .. properties,
    ];
}
