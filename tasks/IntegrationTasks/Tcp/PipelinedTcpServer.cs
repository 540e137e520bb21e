using System.Net;
using System.Net.Sockets;
using System.Threading.Channels;
using IntegrationTasks.Common;
using IntegrationTasks.Data;
using IntegrationTasks.Transfer;
using IntegrationTasks.Wire;

namespace IntegrationTasks.Tcp;

public sealed record TcpServerOptions
{
    public string BindAddress { get; init; } = "127.0.0.1";
    public int Port { get; init; } = 8081;
    public int MaxFrameBytes { get; init; } = FrameCodec.DefaultMaxFrameBytes;

    /// <summary>Requests read ahead per connection before the socket stops being read (back-pressure).</summary>
    public int MaxPendingRequests { get; init; } = 8;
}

/// <summary>
/// TcpServer2 (the series' TcpTestServer2): each connection runs three loops joined by bounded
/// channels — receive frames, answer them in order against the database, send responses — so
/// network I/O never waits for the database and the database never waits for the network. A client
/// that breaks the protocol loses its connection (with a coded warning); the others go on.
/// </summary>
public sealed class PipelinedTcpServer(Database database, TcpServerOptions options, IEventLog log) : IAsyncDisposable
{
    private TcpListener? _listener;
    private long _connections;
    private long _failedConnections;

    public IPEndPoint Start()
    {
        _listener = TcpEndpoints.Listen(options.BindAddress, options.Port);
        return (IPEndPoint)_listener.LocalEndpoint;
    }

    public long ConnectionsServed => Interlocked.Read(ref _connections);
    public long ConnectionsFailed => Interlocked.Read(ref _failedConnections);

    /// <summary>Accepts until cancelled, then waits for the open connections to end.</summary>
    public async Task RunAsync(CancellationToken cancellationToken)
    {
        var listener = _listener ?? throw new InvalidOperationException("Start the server first.");
        var connections = new List<Task>();
        try
        {
            while (!cancellationToken.IsCancellationRequested)
            {
                TcpClient client;
                try
                {
                    client = await listener.AcceptTcpClientAsync(cancellationToken).ConfigureAwait(false);
                }
                catch (OperationCanceledException)
                {
                    break;
                }
                connections.RemoveAll(t => t.IsCompleted);
                connections.Add(ServeAsync(client, cancellationToken));
            }
        }
        finally
        {
            listener.Stop();
            await Task.WhenAll(connections).ConfigureAwait(false);
        }
    }

    private async Task ServeAsync(TcpClient client, CancellationToken serverToken)
    {
        await Task.Yield(); // leave the accept loop at once
        var peer = client.Client.RemoteEndPoint?.ToString() ?? "?";
        using var cancellation = CancellationTokenSource.CreateLinkedTokenSource(serverToken);
        var token = cancellation.Token;
        var requests = Channel.CreateBounded<Frame>(new BoundedChannelOptions(options.MaxPendingRequests)
            { SingleReader = true, SingleWriter = true });
        var responses = Channel.CreateBounded<PooledBufferStream>(new BoundedChannelOptions(2)
            { SingleReader = true, SingleWriter = true });
        var answered = 0;
        try
        {
            client.NoDelay = true;
            await using var stream = client.GetStream();
            await using var lookup = await RecordLookup.OpenAsync(database, token).ConfigureAwait(false);
            log.Detail($"Connection from {peer}.");

            async Task ReceiveAsync()
            {
                while (await FrameCodec.ReadAsync(stream, options.MaxFrameBytes, token).ConfigureAwait(false) is { } frame)
                    await requests.Writer.WriteAsync(frame, token).ConfigureAwait(false);
                requests.Writer.Complete();
            }

            async Task AnswerAsync()
            {
                await foreach (var frame in requests.Reader.ReadAllAsync(token).ConfigureAwait(false))
                {
                    var response = new PooledBufferStream();
                    try
                    {
                        FrameCodec.BeginFrame(response);
                        using (frame)
                        using (var request = frame.OpenRead())
                            await RecordService.AnswerAsync(lookup, request, response, token).ConfigureAwait(false);
                        FrameCodec.EndFrame(response);
                        await responses.Writer.WriteAsync(response, token).ConfigureAwait(false);
                    }
                    catch
                    {
                        response.Dispose();
                        throw;
                    }
                    answered++;
                }
                responses.Writer.Complete();
            }

            async Task SendAsync()
            {
                await foreach (var response in responses.Reader.ReadAllAsync(token).ConfigureAwait(false))
                {
                    using (response)
                        await stream.WriteAsync(response.WrittenMemory, token).ConfigureAwait(false);
                }
                // The client's end marker is echoed after every earlier response, as in the series.
                await FrameCodec.WriteEndAsync(stream, token).ConfigureAwait(false);
                await stream.FlushAsync(token).ConfigureAwait(false);
            }

            await TaskGroup.WhenAllOrFirstFailure(cancellation, ReceiveAsync(), AnswerAsync(), SendAsync()).ConfigureAwait(false);
            Interlocked.Increment(ref _connections);
            log.Detail($"Connection from {peer} finished: {answered} requests answered.");
        }
        catch (OperationCanceledException) when (serverToken.IsCancellationRequested)
        {
            log.Detail($"Connection from {peer} closed: the server is stopping.");
        }
        catch (IntegrationException e)
        {
            Interlocked.Increment(ref _failedConnections);
            log.Warning(e.Code, $"Closed the connection from {peer} after {answered} requests: {e.Message}");
        }
        catch (Exception e) when (TcpEndpoints.IsDisconnect(e))
        {
            Interlocked.Increment(ref _failedConnections);
            log.Warning(ErrorCodes.TruncatedFrame, $"The connection from {peer} broke after {answered} requests: {e.Message}");
        }
        catch (Exception e)
        {
            Interlocked.Increment(ref _failedConnections);
            log.Warning(ErrorCodes.Unexpected, $"Closed the connection from {peer} after an unexpected error: {e}");
        }
        finally
        {
            client.Dispose();
            while (requests.Reader.TryRead(out var frame))
                frame.Dispose();
            while (responses.Reader.TryRead(out var response))
                response.Dispose();
        }
    }

    public ValueTask DisposeAsync()
    {
        _listener?.Stop();
        return ValueTask.CompletedTask;
    }
}
