using System.Diagnostics;

namespace IntegrationTasks.Hosting;

/// <summary>
/// A client run's process, from the build's side: started with its request on standard input (never on the command line: the request
/// holds connection strings), its <see cref="TaskEventLine"/>s handed on as they come, asked to cancel by a line on its input (then,
/// after a grace, killed), and killed once the run's time limit has passed. Its input stays open for the run: when the build dies,
/// the process sees it close and cancels.
/// </summary>
public sealed class ClientProcess : IDisposable
{
    /// <summary>What the process is told on its input to cancel the run.</summary>
    public const string CancelLine = "cancel";

    /// <summary>How long a cancelled process has to end by itself before it is killed.</summary>
    public static readonly TimeSpan CancelGrace = TimeSpan.FromSeconds(30);

    private readonly Process _process;
    private readonly Lock _gate = new();
    private bool _cancelSent;

    private ClientProcess(Process process) => _process = process;

    public int ProcessId => _process.Id;

    /// <summary>The outcome: the task's result where it sent one (null: the process ended without one), and the process's exit code.</summary>
    public sealed record Outcome(bool? Succeeded, int ExitCode, bool Killed);

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

    /// <summary>
    /// Sends the request and hands on every event until the process ends; <paramref name="limit"/> bounds the whole, after which the
    /// process is killed. Cancelling <paramref name="cancellationToken"/> asks the process to cancel, and kills it after
    /// <see cref="CancelGrace"/>.
    /// </summary>
    public async Task<Outcome> RunAsync(string request, Action<TaskEventLine> onEvent, TimeSpan limit, CancellationToken cancellationToken)
    {
        bool? succeeded = null;
        var output = ForwardAsync(_process.StandardOutput, line =>
        {
            var parsed = TaskEventLine.Parse(line);
            if (parsed.Kind == TaskEventKind.Result)
                succeeded = parsed.Succeeded;
            else
                onEvent(parsed);
        });
        // What the runtime itself prints (an unhandled exception, a crash) is kept as detail, the coded failure says the rest.
        var errors = ForwardAsync(_process.StandardError, line => onEvent(TaskEventLine.Message(line, MessageImportance.Normal)));
        try
        {
            await _process.StandardInput.WriteLineAsync(request.AsMemory(), cancellationToken).ConfigureAwait(false);
            await _process.StandardInput.FlushAsync(cancellationToken).ConfigureAwait(false);
        }
        catch (IOException)
        {
            // It ended before it read its request: its exit code and output say why.
        }
        catch (OperationCanceledException) when (cancellationToken.IsCancellationRequested)
        {
        }
        using var registration = cancellationToken.Register(SendCancel);
        var killed = false;
        using (var deadline = new CancellationTokenSource(limit))
        {
            try
            {
                await _process.WaitForExitAsync(deadline.Token).ConfigureAwait(false);
            }
            catch (OperationCanceledException)
            {
                Kill();
                killed = true;
                await _process.WaitForExitAsync(CancellationToken.None).ConfigureAwait(false);
            }
        }
        await Task.WhenAll(output, errors).ConfigureAwait(false);
        return new Outcome(succeeded, _process.ExitCode, killed);
    }

    private static Task ForwardAsync(StreamReader reader, Action<string> onLine) => Task.Run(async () =>
    {
        while (await reader.ReadLineAsync().ConfigureAwait(false) is { } line)
            onLine(line);
    });

    /// <summary>Asks the process to cancel (a line, then its input closed), and kills it if it has not ended after the grace.</summary>
    private void SendCancel()
    {
        lock (_gate)
        {
            if (_cancelSent)
                return;
            _cancelSent = true;
        }
        try
        {
            _process.StandardInput.WriteLine(CancelLine);
            _process.StandardInput.Close();
        }
        catch (Exception e) when (e is IOException or ObjectDisposedException or InvalidOperationException)
        {
            // Already ended.
        }
        _ = Task.Delay(CancelGrace).ContinueWith(_ => Kill(), TaskScheduler.Default);
    }

    /// <summary>Kills the process and whatever it started (the way out of a build terminated or past its limit).</summary>
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

    public void Dispose()
    {
        Kill();
        _process.Dispose();
    }
}
