using NetMQ;

namespace IntegrationTasks.Queues.ZeroMq;

/// <summary>
/// A NetMQ socket belongs to the thread that made it: this runs an async loop on a thread of its own under NetMQ's runtime, whose
/// synchronization context brings every await of the loop back to that thread, and completes (or faults) when the loop does. The
/// socket is made there and disposed after the runtime, whose poller holds it while the loop receives.
/// </summary>
internal static class SocketThread
{
    public static Task RunAsync<TSocket>(string name, Func<TSocket> create, Func<TSocket, Task> loop) where TSocket : NetMQSocket
    {
        var done = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        async Task GuardedAsync(TSocket socket)
        {
            try
            {
                await loop(socket).ConfigureAwait(true);
                done.TrySetResult();
            }
            catch (Exception e)
            {
                done.TrySetException(e);
            }
        }
        var thread = new Thread(() =>
        {
            try
            {
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
            }
            catch (Exception e)
            {
                done.TrySetException(e);
            }
        }) { IsBackground = true, Name = name };
        thread.Start();
        return done.Task;
    }
}
