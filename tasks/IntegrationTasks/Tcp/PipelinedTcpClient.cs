using System.Threading.Channels;
using IntegrationTasks.Common;
using IntegrationTasks.Transfer;
using IntegrationTasks.Wire;

namespace IntegrationTasks.Tcp;

public sealed record TcpClientOptions
{
    public string HostName { get; init; } = "127.0.0.1";
    public int Port { get; init; } = 8081;
    public int MaxFrameBytes { get; init; } = FrameCodec.DefaultMaxFrameBytes;

    /// <summary>Batches requested but not yet imported; the sender waits beyond this (back-pressure).</summary>
    public int MaxInFlight { get; init; } = 8;

    public string ServerTarget { get; init; } = "TcpServer2";
}

/// <summary>
/// TcpClient2 (the series' TcpClientMultiThreadTest2): requests are pipelined without waiting for
/// answers while responses stream back; a separate loop imports them. Unlike the series, the
/// number of batches in flight is bounded and the transfer ends only when the last batch is committed.
/// </summary>
public sealed class PipelinedTcpClient(TcpClientOptions options)
{
    public async Task<TransferResult> RunAsync(BatchPlan plan, BatchImporter importer, CancellationToken cancellationToken)
    {
        using var client = await TcpEndpoints.ConnectAsync(options.HostName, options.Port, options.ServerTarget, cancellationToken)
            .ConfigureAwait(false);
        await using var stream = client.GetStream();
        using var cancellation = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        var token = cancellation.Token;
        using var inFlight = new SemaphoreSlim(options.MaxInFlight);
        var responses = Channel.CreateBounded<Frame>(new BoundedChannelOptions(options.MaxInFlight)
            { SingleReader = true, SingleWriter = true });
        long sent = 0, received = 0;

        async Task SendAsync()
        {
            using var buffer = new PooledBufferStream();
            for (var batch = 0; batch < plan.TotalBatches; batch++)
            {
                await inFlight.WaitAsync(token).ConfigureAwait(false);
                FrameCodec.BeginFrame(buffer);
                RecordXml.WriteRequest(buffer, plan.Ids(batch));
                var frame = FrameCodec.EndFrame(buffer);
                await stream.WriteAsync(frame, token).ConfigureAwait(false);
                sent += frame.Length;
            }
            await FrameCodec.WriteEndAsync(stream, token).ConfigureAwait(false);
            sent += FrameCodec.HeaderSize;
        }

        async Task ReceiveAsync()
        {
            var responsesRead = 0;
            while (await FrameCodec.ReadAsync(stream, options.MaxFrameBytes, token).ConfigureAwait(false) is { } frame)
            {
                received += FrameCodec.FrameBytes(frame.Length);
                if (++responsesRead > plan.TotalBatches)
                {
                    frame.Dispose();
                    throw new IntegrationException(ErrorCodes.TransferFailed,
                        $"The server sent more responses than the {plan.TotalBatches} batches requested.");
                }
                await responses.Writer.WriteAsync(frame, token).ConfigureAwait(false);
            }
            received += FrameCodec.HeaderSize;
            if (responsesRead < plan.TotalBatches)
                throw new IntegrationException(ErrorCodes.TransferFailed,
                    $"The server ended the transfer after {responsesRead} of {plan.TotalBatches} responses.");
            responses.Writer.Complete();
        }

        async Task ImportAsync()
        {
            await foreach (var frame in responses.Reader.ReadAllAsync(token).ConfigureAwait(false))
            {
                using (frame)
                using (var response = frame.OpenRead())
                    await importer.ImportAsync(response, token).ConfigureAwait(false);
                inFlight.Release();
            }
        }

        try
        {
            await TaskGroup.WhenAllOrFirstFailure(cancellation, SendAsync(), ReceiveAsync(), ImportAsync()).ConfigureAwait(false);
        }
        catch (Exception e) when (TcpEndpoints.IsDisconnect(e))
        {
            throw new IntegrationException(ErrorCodes.TransferFailed, $"The connection to the server broke: {e.Message}", e);
        }
        finally
        {
            while (responses.Reader.TryRead(out var frame))
                frame.Dispose();
        }
        return new TransferResult(sent, received);
    }
}
