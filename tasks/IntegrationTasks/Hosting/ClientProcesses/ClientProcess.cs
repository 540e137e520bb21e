using System.Diagnostics;

namespace IntegrationTasks.Hosting;

/// <summary>
/// A client process, from the build's side: the suite's host in its client mode, given one run at a time as a request line on its
/// standard input (never on the command line: a request holds connection strings), its <see cref="TaskEventLine"/>s handed on as
/// they come until the run's result. A run is cancelled by a line on its input (then, after a grace, the process is killed) and
/// bounded by a time limit, past which the process is killed. Its input stays open while it lives: when the build dies, the
/// process sees it close and cancels. It may serve several runs, one after the other (<c>ClientProcess=Transport</c>).
/// </summary>
public sealed class ClientProcess : IDisposable
{
    /// <summary>What the process is told on its input to cancel the run it is making.</summary>
    public const string CancelLine = "cancel";

    /// <summary>How long a cancelled process has to end its run before it is killed.</summary>
    public static readonly TimeSpan CancelGrace = TimeSpan.FromSeconds(30);

    private readonly Process _process;
    private readonly Lock _gate = new();
    private readonly Task _reading;
    private Run? _current;
    private volatile bool _cancelSent;

    private sealed class Run(Action<TaskEventLine> onEvent)
    {
        public Action<TaskEventLine> OnEvent { get; } = onEvent;
        public TaskCompletionSource<bool?> Succeeded { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);
    }

    private ClientProcess(Process process)
    {
        _process = process;
        _reading = Task.WhenAll(ReadAsync(process.StandardOutput, OnOutput), ReadAsync(process.StandardError,
            // What the runtime itself prints (an unhandled exception, a crash) is kept as detail; the coded failure says the rest.
            line => Current()?.OnEvent(TaskEventLine.Message(line, MessageImportance.Normal))));
    }

    public int ProcessId => _process.Id;
    public bool HasExited => _process.HasExited;

    /// <summary>Running, and not told to cancel (a cancelled process ends after its run: it takes no other).</summary>
    public bool Usable => !_cancelSent && !_process.HasExited;

    /// <summary>The outcome of one run: the task's result where it sent one (null: the process ended first), and the exit code then.</summary>
    public sealed record Outcome(bool? Succeeded, int? ExitCode, bool Killed);

    public static ClientProcess Start(ServerLaunch launch)
    {
        var process = new Process { StartInfo = launch.StartInfo() };
        try
        {
            process.Start();
        }
        catch (Exception e) when (e is System.ComponentModel.Win32Exception or InvalidOperationException)
        {
            process.Dispose();
            throw new IntegrationException(ErrorCodes.ClientProcessFailed, $"Cannot start the client process ({launch.FileName}): {e.Message}", e);
        }
        return new ClientProcess(process);
    }

    private Run? Current()
    {
        lock (_gate)
            return _current;
    }

    private void OnOutput(string line)
    {
        var parsed = TaskEventLine.Parse(line);
        var run = Current();
        if (parsed.Kind == TaskEventKind.Result)
            run?.Succeeded.TrySetResult(parsed.Succeeded);
        else
            run?.OnEvent(parsed);
    }

    private static Task ReadAsync(StreamReader reader, Action<string> onLine) => Task.Run(async () =>
    {
        while (await reader.ReadLineAsync().ConfigureAwait(false) is { } line)
            onLine(line);
    });

    /// <summary>
    /// Sends one run's request and hands on its events until its result; <paramref name="limit"/> bounds the run, after which the
    /// process is killed. Cancelling <paramref name="cancellationToken"/> asks the process to cancel the run (and to end), and kills
    /// it after <see cref="CancelGrace"/>.
    /// </summary>
    public async Task<Outcome> RunAsync(string request, Action<TaskEventLine> onEvent, TimeSpan limit, CancellationToken cancellationToken)
    {
        var run = new Run(onEvent);
        lock (_gate)
        {
            if (_current is not null)
                throw new InvalidOperationException("A client process makes one run at a time.");
            _current = run;
        }
        try
        {
            try
            {
                await _process.StandardInput.WriteLineAsync(request.AsMemory(), cancellationToken).ConfigureAwait(false);
                await _process.StandardInput.FlushAsync(cancellationToken).ConfigureAwait(false);
            }
            catch (Exception e) when (e is IOException or ObjectDisposedException or OperationCanceledException)
            {
                // It ended before it read its request, or the build is cancelled: its exit (below) says the rest.
            }
            using var registration = cancellationToken.Register(SendCancel);
            using var deadline = new CancellationTokenSource(limit);
            var exited = _process.WaitForExitAsync(deadline.Token);
            var first = await Task.WhenAny(run.Succeeded.Task, exited).ConfigureAwait(false);
            if (first == run.Succeeded.Task)
                return new Outcome(await run.Succeeded.Task.ConfigureAwait(false), null, Killed: false);
            var killed = exited.IsCanceled;
            if (killed)
            {
                Kill();
                await _process.WaitForExitAsync(CancellationToken.None).ConfigureAwait(false);
            }
            await _reading.ConfigureAwait(false); // every line it wrote, its result among them, has been read
            return new Outcome(run.Succeeded.Task.IsCompleted ? await run.Succeeded.Task.ConfigureAwait(false) : null, _process.ExitCode, killed);
        }
        finally
        {
            lock (_gate)
                _current = null;
        }
    }

    /// <summary>Asks the process to cancel its run and end (a line, then its input closed); kills it if it has not ended after the grace.</summary>
    private void SendCancel()
    {
        _cancelSent = true;
        try
        {
            _process.StandardInput.WriteLine(CancelLine);
            _process.StandardInput.Close();
        }
        catch (Exception e) when (e is IOException or ObjectDisposedException or InvalidOperationException)
        {
            // Already ended, or already told.
        }
        _ = Task.Delay(CancelGrace).ContinueWith(_ => Kill(), TaskScheduler.Default);
    }

    /// <summary>Kills the process and whatever it started (the way out of a build terminated, or of a run past its limit).</summary>
    public void Kill()
    {
        try
        {
            if (!_process.HasExited)
                _process.Kill(entireProcessTree: true);
        }
        catch (Exception e) when (e is InvalidOperationException or System.ComponentModel.Win32Exception)
        {
        }
    }

    /// <summary>Lets the process end by closing its input (it ends once its input closes), and kills it if it has not within the grace.</summary>
    public void Dispose()
    {
        try
        {
            _process.StandardInput.Close();
            if (!_process.WaitForExit(TimeSpan.FromSeconds(10)))
                Kill();
        }
        catch (Exception e) when (e is IOException or InvalidOperationException)
        {
            Kill();
        }
        _process.Dispose();
    }
}
