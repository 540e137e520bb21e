using System.Threading.Channels;
using IntegrationTasks.Transfer;
using IntegrationTasks.Wire;
using NetMQ;
using NetMQ.Monitoring;
using NetMQ.Sockets;

namespace IntegrationTasks.Queues.ZeroMq;

/// <summary>
/// One ZeroMQ client's attempt at the batches not committed. Lock-step (a REQ socket: a request, then its reply, as the series'
/// clients asked) or pipelined (a DEALER socket: up to <see cref="MaxInFlight"/> requests out, each reply tagged with its batch). The
/// socket's own thread sends and receives; the import runs beside it, a bounded channel between (back-pressure: a full channel stops
/// the receiving). ZeroMQ reconnects under the socket and drops what was in flight on the lost connection without a word to its
/// sender, so the attempt ends (IT3006) as soon as the socket's monitor reports the connection gone, or when a reply does not come
/// within <see cref="ReplyTimeout"/>: the task's resumption asks again, on a new socket, for what is not committed, and a late reply
/// to the old one is never read.
/// </summary>
public sealed class ZeroMqRequester(string endpoint, bool pipelined)
{
    public int MaxInFlight { get; init; } = SettingDefaults.MaxInFlight;
    public int MaxMessageBytes { get; init; } = SettingDefaults.MaxFrameBytes;

    /// <summary>CurveZMQ: the server's public key it must prove (<see cref="ZeroMqCurve"/>); null: plaintext.</summary>
    public byte[]? CurveServerKey { get; init; }

    /// <summary>How long a request waits for its reply (batches are answered in milliseconds; 16 clients of 1 MiB rows wait seconds).</summary>
    public TimeSpan ReplyTimeout { get; init; } = TimeSpan.FromSeconds(15);

    private int Window => pipelined ? Math.Max(1, MaxInFlight) : 1;

    public async Task<TransferResult> RunAsync(BatchPlan plan, BatchImporter importer, IReadOnlyList<int> pending, CommittedBatches committed,
        Action connected, CancellationToken cancellationToken)
    {
        if (pending.Count == 0)
            return new TransferResult(0, 0);
        var replies = Channel.CreateBounded<(int Batch, NetMQFrame Body)>(new BoundedChannelOptions(Window) { SingleReader = true, SingleWriter = true });
        using var failed = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        long sent = 0, received = 0;
        var exchanging = SocketThread.RunAsync<NetMQSocket>("ZeroMQ client", () => pipelined ? new DealerSocket() : new RequestSocket(),
            socket => ExchangeAsync(socket, plan, importer, pending, committed, connected, replies.Writer, (s, r) => { sent += s; received += r; }, failed.Token));
        var importing = ImportAsync(replies.Reader, importer, committed, failed.Token);
        // The first failure cancels the other side (an import that fails leaves no reader, and the exchange would wait on a full
        // channel), and it is what is thrown, not the cancellation it caused.
        await TaskGroup.WhenAllOrFirstFailure(failed, exchanging, importing).ConfigureAwait(false);
        return new TransferResult(Interlocked.Read(ref sent), Interlocked.Read(ref received));
    }

    private static async Task ImportAsync(ChannelReader<(int Batch, NetMQFrame Body)> replies, BatchImporter importer, CommittedBatches committed,
        CancellationToken cancellationToken)
    {
        await foreach (var (batch, body) in replies.ReadAllAsync(cancellationToken).ConfigureAwait(false))
        {
            using var stream = new MemoryStream(body.Buffer, 0, body.MessageSize, writable: false, publiclyVisible: true);
            await importer.ImportAsync(stream, cancellationToken).ConfigureAwait(false);
            committed.Add(batch);
        }
    }

    // Runs on the socket's thread: every await comes back to it (ConfigureAwait(true)), where the socket may be used. What cancels a
    // receive (the caller, the monitor, the reply timeout) is posted to this thread too: NetMQ's cancellation touches the socket.
    private async Task ExchangeAsync(NetMQSocket socket, BatchPlan plan, BatchImporter importer, IReadOnlyList<int> pending, CommittedBatches committed,
        Action connected, ChannelWriter<(int Batch, NetMQFrame Body)> replies, Action<long, long> counted, CancellationToken cancellationToken)
    {
        socket.Options.MaxMsgSize = MaxMessageBytes;
        if (CurveServerKey is { } serverKey)
        {
            socket.Options.CurveServerKey = serverKey;
            socket.Options.CurveCertificate = new NetMQCertificate(); // the client's own, for this socket: NetMQ checks no client's key
        }
        var thread = new SocketThreadContext(SynchronizationContext.Current!);
        var everConnected = false;
        var lost = false;
        var monitor = new NetMQMonitor(socket, $"inproc://zeromq-client-{Guid.NewGuid():N}", SocketEvents.Connected | SocketEvents.Disconnected);
        // Connected once the monitor says so, or once a reply comes: the monitor drops an event sent before its own socket is connected.
        void MarkConnected()
        {
            if (everConnected)
                return;
            everConnected = true;
            connected();
        }
        monitor.Connected += (_, _) => thread.Post(MarkConnected);
        monitor.Disconnected += (_, _) => thread.Post(() =>
        {
            lost = true;
            thread.CancelReceive();
        });
        // The monitor's loop blocks its thread for the whole transfer: a thread of its own, not one of the pool the imports need.
        var monitoring = SocketThread.OnThreadOfItsOwn("ZeroMQ monitor", monitor.Start);
        using var cancelled = cancellationToken.Register(() => thread.Post(thread.CancelReceive));
        try
        {
            socket.Connect(endpoint);
            importer.MarkSetupDone();
            var waiting = new Queue<int>(pending);
            var outstanding = 0;
            var lastSent = -1;
            while (waiting.Count > 0 || outstanding > 0)
            {
                while (outstanding < Window && waiting.TryDequeue(out var batch))
                {
                    await committed.Latency.SendTurnAsync(batch, cancellationToken).ConfigureAwait(true);
                    using var request = new PooledBufferStream();
                    RecordXml.WriteRequest(request, plan.Ids(batch));
                    var message = new NetMQMessage();
                    if (pipelined)
                        message.Append(ZeroMqFrames.BatchNumber(batch));
                    message.Append(request.WrittenMemory.ToArray());
                    socket.SendMultipartMessage(message);
                    counted(request.Length, 0);
                    outstanding++;
                    lastSent = batch;
                }
                var reply = await ReceiveAsync(socket, thread, lastSent, () => (everConnected, lost), cancellationToken).ConfigureAwait(true);
                MarkConnected();
                var answered = pipelined ? ZeroMqFrames.ReadBatchNumber(reply[0]) : lastSent;
                ZeroMqFrames.ThrowIfRefused(reply[reply.FrameCount - 2], answered);
                var body = reply.Last;
                outstanding--;
                counted(0, body.MessageSize);
                committed.Latency.Received(answered);
                await replies.WriteAsync((answered, body), cancellationToken).ConfigureAwait(true);
            }
            replies.TryComplete();
        }
        catch (Exception e)
        {
            replies.TryComplete(e);
            throw;
        }
        finally
        {
            thread.Close();
            // The monitor's own thread sees a stop at its next poll (up to half a second): the transfer is done and does not wait for it.
            _ = StopAsync(monitor, monitoring);
        }
    }

    private async Task<NetMQMessage> ReceiveAsync(NetMQSocket socket, SocketThreadContext thread, int lastSent, Func<(bool Connected, bool Lost)> state,
        CancellationToken cancellationToken)
    {
        // Set on the socket's thread once the reply came: a timer that fires just after is then not taken for this reply's timeout.
        var answered = false;
        using var timeout = new Timer(_ => thread.Post(() =>
        {
            if (!answered)
                thread.CancelReceive();
        }), null, ReplyTimeout, Timeout.InfiniteTimeSpan);
        NetMQMessage reply;
        try
        {
            reply = await socket.ReceiveMultipartMessageAsync(3, thread.ReceiveToken).ConfigureAwait(true);
            answered = true;
        }
        catch (OperationCanceledException) when (!cancellationToken.IsCancellationRequested)
        {
            var (connected, lost) = state();
            throw lost
                ? new IntegrationException(ErrorCodes.ConnectionLost,
                    $"The connection to {endpoint} was lost (the last request sent: batch {lastSent}); what it carried is asked for again on a new one.")
                : connected
                    ? new IntegrationException(ErrorCodes.ConnectionLost,
                        $"No reply from {endpoint} within {ReplyTimeout.TotalSeconds:0} s (the last request sent: batch {lastSent}); the connection is taken as lost.")
                    : new IntegrationException(ErrorCodes.ConnectionFailed,
                        $"No ZeroMQ server accepted the connection to {endpoint} within {ReplyTimeout.TotalSeconds:0} s: is its server running?");
        }
        if (reply.FrameCount != (pipelined ? 3 : 2))
            throw new IntegrationException(ErrorCodes.MalformedMessage, $"A reply from {endpoint} has {reply.FrameCount} frames, not {(pipelined ? 3 : 2)}.");
        return reply;
    }

    private static async Task StopAsync(NetMQMonitor monitor, Task monitoring)
    {
        try
        {
            await SocketThread.OnThreadOfItsOwn("ZeroMQ monitor stop", monitor.Stop).ConfigureAwait(false);
            await monitoring.ConfigureAwait(false);
        }
        catch (Exception e) when (e is InvalidOperationException or ObjectDisposedException or NetMQException)
        {
            // Already stopped, or its socket already gone: nothing is left running either way.
        }
        finally
        {
            monitor.Dispose();
        }
    }

}
