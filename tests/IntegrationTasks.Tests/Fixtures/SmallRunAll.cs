namespace IntegrationTasks.Tests;

/// <summary>The smallest interleaved RunAll that pairs a transport with the reference: TcpClient2 and PipelinedCopy, 2,000 records.</summary>
internal static class SmallRunAll
{
    public static (int ExitCode, string Output) Run(string artifacts, params string[] properties) =>
        HostingTests.RunBuild("RunAll", artifacts, ["-p:Transports=TcpClient2+PipelinedCopy", "-p:RecordCounts=2000",
            "-p:BatchSize=200", "-p:Peers=false", "-p:WarmupRuns=1", "-p:ReferenceReaders=2", .. properties]);
}
