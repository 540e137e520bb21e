using System.Diagnostics;

namespace IntegrationTasks.Hosting;

/// <summary>
/// A server running as its own process: started with redirected output (forwarded line by line,
/// and kept in a log file), ready when it prints the ready marker, stopped by closing its standard
/// input, then SIGINT, then a kill of its whole tree. Disposing it kills whatever is still running,
/// so a failed or cancelled build leaves nothing behind.
/// </summary>
public sealed class ServerProcess : IDisposable
{
    private const int RecentLines = 40;
    private const int PendingLinesKept = 2000;

    private Process _process;
    private TaskCompletionSource<string> _ready = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private ServerLaunch? _launch;
    private IReadOnlyDictionary<string, string>? _environment;
    private bool _stopping;
    private Task _restarting = Task.CompletedTask;
    private readonly Queue<string> _recent = new();
    private readonly Queue<string> _pending = new();
    private readonly StreamWriter? _logFile;
    private readonly object _gate = new();
    private Action<string>? _sink;
    private string _readyMarker = ServerSignals.ReadyMarker;
    private int _droppedLines;

    private ServerProcess(string name, Process process, string? logFile)
    {
        Name = name;
        _process = process;
        if (logFile is not null)
        {
            Directory.CreateDirectory(Path.GetDirectoryName(Path.GetFullPath(logFile))!);
            _logFile = new StreamWriter(logFile, append: false) { AutoFlush = true };
        }
    }

    public string Name { get; }
    public int ProcessId => _process.Id;

    /// <summary>
    /// Start the server again whenever its process exits without being stopped (the KillServer fault: a server killed mid-transfer
    /// comes back as a service manager would bring it back). Each start writes <see cref="PidFile"/>.
    /// </summary>
    public bool RestartOnExit { get; set; }
    public TimeSpan RestartReadyTimeout { get; set; } = TimeSpan.FromSeconds(120);

    /// <summary>Where the current process id is written (for whoever must find the server after a restart), if anywhere; written when set.</summary>
    public string? PidFile
    {
        get => _pidFile;
        set
        {
            _pidFile = value;
            if (value is not null)
                File.WriteAllText(value, _process.Id.ToString(System.Globalization.CultureInfo.InvariantCulture));
        }
    }

    private string? _pidFile;

    /// <summary>How many times the server was started again after its process exited.</summary>
    public int Restarts { get; private set; }
    public bool HasExited => _process.HasExited;
    public int ExitCode => _process.ExitCode;

    /// <param name="readyMarker">The line that means ready; by default the suite's server marker, followed by the endpoint.</param>
    public static ServerProcess Start(string name, ServerLaunch launch, string? logFile, Action<string>? sink,
        string? readyMarker = null, IReadOnlyDictionary<string, string>? environment = null)
    {
        var server = new ServerProcess(name, CreateProcess(launch, environment), logFile)
        {
            _sink = sink, _readyMarker = readyMarker ?? ServerSignals.ReadyMarker, _launch = launch, _environment = environment,
        };
        server.Run(server._process);
        return server;
    }

    private static Process CreateProcess(ServerLaunch launch, IReadOnlyDictionary<string, string>? environment)
    {
        var info = launch.StartInfo();
        // The child is a build of its own: it must not join this build's node or terminal logger.
        info.Environment.Remove("MSBUILDNOINPROCNODE");
        info.Environment["MSBUILDDISABLENODEREUSE"] = "1";
        foreach (var (variable, value) in environment ?? new Dictionary<string, string>())
            info.Environment[variable] = value;
        return new Process { StartInfo = info, EnableRaisingEvents = true };
    }

    private void Run(Process process)
    {
        process.OutputDataReceived += (_, e) => OnLine(e.Data);
        process.ErrorDataReceived += (_, e) => OnLine(e.Data);
        process.Exited += (_, _) => OnExited(process);
        try
        {
            process.Start();
        }
        catch (Exception e) when (e is System.ComponentModel.Win32Exception or InvalidOperationException)
        {
            Dispose();
            throw new IntegrationException(ErrorCodes.ServerExited, $"Cannot start the {Name} process ({process.StartInfo.FileName}): {e.Message}", e);
        }
        process.BeginOutputReadLine();
        process.BeginErrorReadLine();
        if (PidFile is not null)
            File.WriteAllText(PidFile, process.Id.ToString(System.Globalization.CultureInfo.InvariantCulture));
    }

    /// <summary>A process that exits while armed and not being stopped is started again (once it has exited, with the same launch).</summary>
    private void OnExited(Process exited)
    {
        lock (_gate)
        {
            if (!RestartOnExit || _stopping || exited != _process || _launch is null)
                return;
            _restarting = RestartAsync(exited.ExitCode);
        }
    }

    private async Task RestartAsync(int exitCode)
    {
        await Task.Yield(); // off the Exited event's thread
        OnLine($"warning {ErrorCodes.ServerRestarted}: {Name} exited (code {exitCode}) without being stopped; starting it again.");
        Process next;
        lock (_gate)
        {
            if (_stopping)
                return;
            next = CreateProcess(_launch!, _environment);
            _ready = new TaskCompletionSource<string>(TaskCreationOptions.RunContinuationsAsynchronously);
            _process = next;
            Restarts++;
            Run(next);
        }
        try
        {
            var endpoint = await WaitReadyAsync(RestartReadyTimeout, CancellationToken.None).ConfigureAwait(false);
            OnLine($"{Name} is back (process {next.Id}) at {endpoint}.");
        }
        catch (IntegrationException e)
        {
            OnLine($"error {e.Code}: {Name} did not come back: {e.Message}");
        }
    }

    /// <summary>Where output lines go while a task is there to log them; otherwise they are queued.</summary>
    public void AttachLog(Action<string>? sink)
    {
        List<string> backlog;
        lock (_gate)
        {
            _sink = sink;
            if (sink is null)
                return;
            backlog = [.. _pending];
            _pending.Clear();
        }
        if (_droppedLines > 0)
            sink($"({_droppedLines} earlier lines are only in the server's log file)");
        foreach (var line in backlog)
            sink(line);
    }

    private void OnLine(string? line)
    {
        if (line is null)
            return;
        _logFile?.WriteLine(line);
        Action<string>? sink;
        lock (_gate)
        {
            _recent.Enqueue(line);
            if (_recent.Count > RecentLines)
                _recent.Dequeue();
            sink = _sink;
            if (sink is null)
            {
                _pending.Enqueue(line);
                if (_pending.Count > PendingLinesKept)
                {
                    _pending.Dequeue();
                    _droppedLines++;
                }
            }
        }
        sink?.Invoke(line);
        var marker = line.IndexOf(_readyMarker, StringComparison.Ordinal);
        if (marker >= 0)
        {
            var rest = line[(marker + _readyMarker.Length)..].Trim();
            _ready.TrySetResult(rest.Split(' ')[0]);
        }
    }

    public string RecentOutput()
    {
        lock (_gate)
            return string.Join(Environment.NewLine, _recent);
    }

    /// <summary>Waits for the ready marker; fails clearly if the process exits first or time runs out.</summary>
    public async Task<string> WaitReadyAsync(TimeSpan timeout, CancellationToken cancellationToken)
    {
        using var timer = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        timer.CancelAfter(timeout);
        var exited = _process.WaitForExitAsync(timer.Token);
        var first = await Task.WhenAny(_ready.Task, exited).ConfigureAwait(false);
        if (first == _ready.Task)
            return await _ready.Task.ConfigureAwait(false);
        cancellationToken.ThrowIfCancellationRequested();
        if (_process.HasExited)
        {
            await _process.WaitForExitAsync(CancellationToken.None).ConfigureAwait(false); // drain output
            var output = RecentOutput();
            var portLine = output.Split('\n').FirstOrDefault(l => l.Contains(ErrorCodes.PortInUse, StringComparison.Ordinal));
            if (portLine is not null)
                throw new IntegrationException(ErrorCodes.PortInUse, $"{Name} could not start: {portLine.Trim()}");
            throw new IntegrationException(ErrorCodes.ServerExited,
                $"{Name} exited with code {_process.ExitCode} before it was ready. Its last output:{Environment.NewLine}{output}");
        }
        throw new IntegrationException(ErrorCodes.ServerNotReady,
            $"{Name} was not ready within {timeout.TotalSeconds:F0} s. Its last output:{Environment.NewLine}{RecentOutput()}");
    }

    /// <summary>
    /// Waits until the server runs and is ready: at once normally; after a kill (KillServer), until it is back — the next run must not
    /// find it still coming back. Fails like <see cref="WaitReadyAsync"/> when it does not come back within the timeout.
    /// </summary>
    public async Task WhenRunningAsync(TimeSpan timeout, CancellationToken cancellationToken)
    {
        using var timer = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        timer.CancelAfter(timeout);
        try
        {
            while (true)
            {
                Task restarting;
                bool exitedUnrestarted;
                lock (_gate)
                {
                    restarting = _restarting;
                    exitedUnrestarted = restarting.IsCompleted && _process.HasExited && RestartOnExit && !_stopping;
                }
                if (!restarting.IsCompleted)
                    await restarting.WaitAsync(timer.Token).ConfigureAwait(false);
                else if (exitedUnrestarted)
                    await Task.Delay(20, timer.Token).ConfigureAwait(false); // its Exited event is about to start it again
                else
                    break;
            }
        }
        catch (OperationCanceledException) when (!cancellationToken.IsCancellationRequested)
        {
            throw new IntegrationException(ErrorCodes.ServerNotReady,
                $"{Name} was not back within {timeout.TotalSeconds:F0} s of its restart. Its last output:{Environment.NewLine}{RecentOutput()}");
        }
        await WaitReadyAsync(timeout, cancellationToken).ConfigureAwait(false);
    }

    /// <summary>Waits until the process exits (true) or the token is cancelled (false).</summary>
    public async Task<bool> WaitForExitOrCancellationAsync(CancellationToken cancellationToken)
    {
        try
        {
            await _process.WaitForExitAsync(cancellationToken).ConfigureAwait(false);
            return true;
        }
        catch (OperationCanceledException) when (cancellationToken.IsCancellationRequested)
        {
            return false;
        }
    }

    /// <summary>
    /// From now on an exit is not restarted, and a restart under way has ended: what a stop by other means (a broker's own signal)
    /// does first, so that the exit it causes is not taken for a crash.
    /// </summary>
    public async Task EndRestartsAsync(CancellationToken cancellationToken)
    {
        Task restarting;
        lock (_gate)
        {
            _stopping = true;
            restarting = _restarting;
        }
        try
        {
            await restarting.WaitAsync(cancellationToken).ConfigureAwait(false);
        }
        catch (IntegrationException)
        {
            // A restart that failed (its process could not start) leaves nothing to wait for: the stop goes on.
        }
    }

    /// <summary>Graceful stop: close stdin, then SIGINT, then kill. Returns the exit code, or null if it had to be killed.</summary>
    public async Task<int?> StopAsync(TimeSpan grace, CancellationToken cancellationToken)
    {
        await EndRestartsAsync(cancellationToken).ConfigureAwait(false); // a server coming back is stopped once it is back
        if (_process.HasExited)
            return _process.ExitCode;
        try
        {
            _process.StandardInput.Close();
        }
        catch (IOException)
        {
        }
        if (await ExitsWithinAsync(grace, cancellationToken).ConfigureAwait(false))
            return _process.ExitCode;
        if (OperatingSystem.IsLinux() || OperatingSystem.IsMacOS())
        {
            _ = ProcessTree.Signal(_process.Id, ProcessTree.SigInt);
            if (await ExitsWithinAsync(TimeSpan.FromSeconds(10), cancellationToken).ConfigureAwait(false))
                return _process.ExitCode;
        }
        Kill();
        return null;
    }

    private async Task<bool> ExitsWithinAsync(TimeSpan wait, CancellationToken cancellationToken)
    {
        using var timer = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        timer.CancelAfter(wait);
        try
        {
            await _process.WaitForExitAsync(timer.Token).ConfigureAwait(false);
            return true;
        }
        catch (OperationCanceledException) when (!cancellationToken.IsCancellationRequested)
        {
            return false;
        }
    }

    public void Kill()
    {
        try
        {
            if (!_process.HasExited)
                _process.Kill(entireProcessTree: true);
        }
        catch (InvalidOperationException)
        {
        }
    }

    public void Dispose()
    {
        lock (_gate)
            _stopping = true;
        Kill();
        _process.Dispose();
        _logFile?.Dispose();
    }
}
