using NetMQ;

namespace IntegrationTasks.Queues.ZeroMq;

/// <summary>
/// A NetMQ socket belongs to the thread that made it: this runs an async loop on a thread of its own under NetMQ's runtime, whose
/// synchronization context brings every await of the loop back to that thread. The socket is made there and disposed after the
/// runtime, whose poller holds it while the loop receives; the task completes (or faults, with the loop's error) once both are.
/// </summary>
internal static class SocketThread
{
    public static Task RunAsync<TSocket>(string name, Func<TSocket> create, Func<TSocket, Task> loop) where TSocket : NetMQSocket =>
        OnThreadOfItsOwn(name, () =>
        {
            System.Runtime.ExceptionServices.ExceptionDispatchInfo? failure = null;
            async Task GuardedAsync(TSocket socket)
            {
                try
                {
                    await loop(socket).ConfigureAwait(true);
                }
                catch (Exception e)
                {
                    failure = System.Runtime.ExceptionServices.ExceptionDispatchInfo.Capture(e);
                }
            }
            // Made before the loop starts: its synchronization context is what the loop's awaits capture.
            var runtime = new NetMQRuntime();
            var socket = create();
            socket.Options.Linger = TimeSpan.Zero;
            try
            {
                runtime.Run(GuardedAsync(socket));
            }
            finally
            {
                runtime.Dispose();
                socket.Dispose();
            }
            failure?.Throw();
        });

    /// <summary>Runs <paramref name="body"/> on a background thread of its own (work that blocks it, kept off the pool); completes with it.</summary>
    public static Task OnThreadOfItsOwn(string name, Action body)
    {
        var done = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        new Thread(() =>
        {
            try
            {
                body();
                done.TrySetResult();
            }
            catch (Exception e)
            {
                done.TrySetException(e);
            }
        }) { IsBackground = true, Name = name }.Start();
        return done.Task;
    }
}

/// <summary>
/// The socket thread's side of cancelling a receive: other threads (a timer, the socket's monitor, the caller) post their wish here,
/// and the receive's token is cancelled on the socket's own thread, since NetMQ's cancellation touches the socket. Posts that come
/// after the loop ended are dropped.
/// </summary>
internal sealed class SocketThreadContext(SynchronizationContext context)
{
    private readonly CancellationTokenSource _receive = new();
    private volatile bool _closed;

    /// <summary>The receives' token: once cancelled (<see cref="CancelReceive"/>), the receive under way and every later one end cancelled.</summary>
    public CancellationToken ReceiveToken => _receive.Token;

    /// <summary>On the socket's thread: the receive under way, or the next one, ends cancelled.</summary>
    public void CancelReceive()
    {
        if (!_closed)
            _receive.Cancel();
    }

    /// <summary>From any thread: runs <paramref name="action"/> on the socket's thread, unless the loop has ended.</summary>
    public void Post(Action action)
    {
        if (_closed)
            return;
        try
        {
            context.Post(_ =>
            {
                if (!_closed)
                    action();
            }, null);
        }
        catch (Exception e) when (e is ObjectDisposedException or InvalidOperationException or TaskSchedulerException)
        {
            // The runtime stopped between the check and the post: the loop has ended, nothing is left to cancel.
        }
    }

    /// <summary>On the socket's thread, at the loop's end: later posts are dropped.</summary>
    public void Close()
    {
        _closed = true;
        _receive.Dispose();
    }
}
