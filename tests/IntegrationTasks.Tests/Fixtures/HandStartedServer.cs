namespace IntegrationTasks.Tests;

/// <summary>A server target started as a person starts it (<c>dotnet msbuild build.proj -t:TcpServer2</c>), its output watched.</summary>
internal sealed class HandStartedServer : IDisposable
{
    private HandStartedServer(Process process) => Process = process;

    public Process Process { get; }
    public ProcessScreen Screen { get; } = new();

    public static HandStartedServer Start(string target, TempDirectory artifacts, int port, params string[] properties) =>
        StartIn([], target, artifacts, port, properties);

    /// <summary>As <see cref="Start"/>, through a command prefix (<c>ip netns exec NS</c>: on a simulated host of its own).</summary>
    public static HandStartedServer StartIn(IReadOnlyList<string> prefix, string target, TempDirectory artifacts, int port, params string[] properties)
    {
        var info = new ProcessStartInfo(prefix.Count > 0 ? prefix[0] : "dotnet")
        {
            RedirectStandardOutput = true, RedirectStandardError = true, RedirectStandardInput = true, WorkingDirectory = RepositoryPaths.Root,
        };
        foreach (var argument in prefix.Skip(1).Concat(prefix.Count > 0 ? ["dotnet"] : [])
                     .Concat(TestBuild.Arguments(target, artifacts, [$"-p:Port={port}", .. properties])))
            info.ArgumentList.Add(argument);
        var server = new HandStartedServer(Process.Start(info)!);
        server.Process.OutputDataReceived += (_, e) => server.Screen.Add(e.Data);
        server.Process.ErrorDataReceived += (_, e) => server.Screen.Add(e.Data);
        server.Process.BeginOutputReadLine();
        server.Process.BeginErrorReadLine();
        return server;
    }

    /// <summary>The most memory the process has had resident so far (VmHWM), in bytes.</summary>
    public long PeakResidentBytes()
    {
        var line = File.ReadLines($"/proc/{Process.Id}/status").First(l => l.StartsWith("VmHWM:", StringComparison.Ordinal));
        return long.Parse(line["VmHWM:".Length..].Trim().Split(' ')[0], System.Globalization.CultureInfo.InvariantCulture) * 1024;
    }

    /// <summary>Ctrl+C: SIGINT to the build, as the terminal sends it.</summary>
    public async Task InterruptAsync()
    {
        // A process tree started as a background job of a non-interactive shell ignores SIGINT (and passes that on to every child):
        // Ctrl+C could never reach the server, and the wait for it to stop would only time out. Say so instead.
        var ignored = File.ReadLines($"/proc/{Process.Id}/status").First(l => l.StartsWith("SigIgn:", StringComparison.Ordinal));
        if ((Convert.ToUInt64(ignored["SigIgn:".Length..].Trim(), 16) & 0x2) != 0)
            throw new InvalidOperationException(
                "SIGINT is ignored in this process tree (the tests were started as a background job, 'command &', of a non-interactive shell), " +
                "so a Ctrl+C cannot be tested: run the test command in the foreground, in a terminal or tmux.");
        using var kill = Process.Start("kill", ["-INT", Process.Id.ToString(System.Globalization.CultureInfo.InvariantCulture)]);
        await kill.WaitForExitAsync();
    }

    public void Dispose()
    {
        if (!Process.HasExited)
            Process.Kill(entireProcessTree: true);
        Process.Dispose();
    }
}

/// <summary>A process's output, line by line, with a wait for a line that contains a text (and a timeout that names it).</summary>
internal sealed class ProcessScreen
{
    private readonly List<string> _lines = [];
    private readonly List<(string Text, TaskCompletionSource<string> Seen)> _waits = [];

    public void Add(string? line)
    {
        if (line is null)
            return;
        lock (_lines)
        {
            _lines.Add(line);
            foreach (var wait in _waits.Where(w => line.Contains(w.Text, StringComparison.Ordinal)))
                wait.Seen.TrySetResult(line);
        }
    }

    public async Task<string> WaitForAsync(string text, TimeSpan timeout)
    {
        var seen = new TaskCompletionSource<string>(TaskCreationOptions.RunContinuationsAsynchronously);
        lock (_lines)
        {
            if (_lines.FirstOrDefault(l => l.Contains(text, StringComparison.Ordinal)) is { } line)
                return line;
            _waits.Add((text, seen));
        }
        try
        {
            return await seen.Task.WaitAsync(timeout);
        }
        catch (TimeoutException)
        {
            throw new TimeoutException($"No line with \"{text}\" within {timeout.TotalSeconds} s. The screen:\n{this}");
        }
    }

    public IReadOnlyList<string> Lines
    {
        get
        {
            lock (_lines)
                return [.. _lines];
        }
    }

    public override string ToString() { lock (_lines) return string.Join("\n", _lines); }
}
