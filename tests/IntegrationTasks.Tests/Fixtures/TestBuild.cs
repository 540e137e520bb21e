namespace IntegrationTasks.Tests;

/// <summary>
/// The command line every test build of <c>build.proj</c> starts from: the tasks the test run already built, the test's own
/// artifacts, a free port for every server and broker (tests run two at a time: no build may fall back on a default port), and
/// no calibration of the machine's noise (twenty seconds a RunAll; the tests that read it ask with <c>-p:Calibrate=true</c>).
/// The caller's properties come last and win.
/// </summary>
internal static class TestBuild
{
    /// <summary>
    /// The port properties of the targets: the relay's and the starvation lab's, and whatever the definitions name — each transport's
    /// PortProperty and each broker's PortProperties — so that a transport added in its family's targets file is given a free port
    /// without a line here.
    /// </summary>
    internal static IReadOnlyList<string> PortProperties => Ports.Value;

    private static readonly Lazy<string[]> Ports = new(() =>
    [
        .. new[] { "RelayPort", "StarvationPort" }
            .Concat(Definitions.Transports.Select(t => t.GetValueOrDefault("PortProperty", "")))
            .Concat(Definitions.Brokers.SelectMany(b => b.GetValueOrDefault("PortProperties", "").Split(';')))
            .Where(p => p.Length > 0).Distinct(StringComparer.Ordinal),
    ]);

    public static string[] Arguments(string target, string? artifacts, params IEnumerable<string> properties) =>
    [
        "msbuild", RepositoryPaths.BuildProject, $"-t:{target}", "-nologo", "-tl:off", $"-p:Configuration={HostingTests.Configuration}",
        "-p:SkipTasksBuild=true", .. artifacts is null ? Array.Empty<string>() : [$"-p:ArtifactsDir={artifacts}/"], "-p:Calibrate=false",
        .. PortProperties.Select(p => $"-p:{p}={TestPorts.Free()}"), .. properties,
    ];
}
