using IntegrationTasks.Common;
using IntegrationTasks.Transfer;
using IntegrationTasks.Wire;
using Microsoft.Build.Framework;

namespace IntegrationTasks.Tcp;

/// <summary>The series' TcpClientMultiThreadTest2 as an MSBuild task.</summary>
public sealed class TcpClient2 : TransferClientTask
{
    [Required]
    public string HostName { get; set; } = "127.0.0.1";

    public int Port { get; set; } = 8081;

    public int MaxFrameBytes { get; set; } = FrameCodec.DefaultMaxFrameBytes;

    public int MaxInFlight { get; set; } = 8;

    protected override string TransportName => "TcpClient2";

    protected override Task<TransferResult> TransferAsync(BatchPlan plan, BatchImporter importer, CancellationToken cancellationToken)
    {
        if (MaxInFlight < 1)
            throw new IntegrationException(ErrorCodes.InvalidParameter, $"MaxInFlight must be at least 1 (was {MaxInFlight}).");
        var client = new PipelinedTcpClient(new TcpClientOptions
        {
            HostName = HostName, Port = Port, MaxFrameBytes = MaxFrameBytes, MaxInFlight = MaxInFlight,
        });
        return client.RunAsync(plan, importer, cancellationToken);
    }
}
