namespace IntegrationTasks.Tests;

/// <summary>A server task of the host process (HttpServer, SoapServer) running until disposed.</summary>
internal sealed class RunningHostModule : IAsyncDisposable
{
    private readonly HostModuleServerTask _task;
    private readonly Task<bool> _execution;

    private RunningHostModule(HostModuleServerTask task, Task<bool> execution, int port, string path)
    {
        _task = task;
        _execution = execution;
        Port = port;
        Url = $"{(task.Tls ? "https" : "http")}://127.0.0.1:{port}{path}";
    }

    public int Port { get; }
    public string Url { get; }

    public static string HostAssembly => Path.Combine(RepositoryPaths.Root, "tasks", "IntegrationTasks.Host", "bin", HostingTests.Configuration,
        "net10.0", "IntegrationTasks.Host.dll");

    /// <summary>Starts the task on a free port with the given database and waits for its ready line.</summary>
    public static async Task<RunningHostModule> StartAsync(HostModuleServerTask task, TestDatabases databases, string path)
    {
        var port = TestPorts.Free();
        var engine = new FakeBuildEngine();
        task.BuildEngine = engine;
        task.ServerProvider = databases.ProviderName;
        task.ServerConnString = databases.Server.ConnectionString;
        task.HostAssembly = HostAssembly;
        task.Url = $"{(task.Tls ? "https" : "http")}://127.0.0.1:{port}";
        var server = new RunningHostModule(task, Task.Run(task.Execute), port, path);
        await Eventually.WaitUntilAsync(() => engine.Log.Contains(IntegrationTasks.Hosting.ServerSignals.ReadyMarker) || server._execution.IsCompleted,
            $"{task.GetType().Name}'s ready line", TimeSpan.FromSeconds(60), () => engine.Log);
        if (!engine.Log.Contains(IntegrationTasks.Hosting.ServerSignals.ReadyMarker))
            Assert.Fail($"{task.GetType().Name} ended before it was ready:\n{engine.Log}");
        return server;
    }

    /// <summary>The host process's peak resident memory so far (VmHWM), found by the URL it was started with.</summary>
    public long PeakResidentBytes()
    {
        var url = $"--url {(_task.Tls ? "https" : "http")}://127.0.0.1:{Port} ";
        foreach (var dir in Directory.EnumerateDirectories("/proc").Where(d => int.TryParse(Path.GetFileName(d), out _)))
        {
            try
            {
                if (!File.ReadAllText(Path.Combine(dir, "cmdline")).Replace('\0', ' ').Contains(url, StringComparison.Ordinal))
                    continue;
                var line = File.ReadLines(Path.Combine(dir, "status")).First(l => l.StartsWith("VmHWM:", StringComparison.Ordinal));
                return long.Parse(line["VmHWM:".Length..].Trim().Split(' ')[0], System.Globalization.CultureInfo.InvariantCulture) * 1024;
            }
            catch (IOException)
            {
                // a process that ended meanwhile
            }
        }
        throw new AssertFailedException($"No host process started with {url.Trim()}.");
    }

    public string Log => _task.BuildEngine is FakeBuildEngine engine ? engine.Log : "";

    public async ValueTask DisposeAsync()
    {
        _task.Cancel();
        Assert.IsTrue(await _execution.WaitAsync(TimeSpan.FromSeconds(30)), $"{_task.GetType().Name} did not stop cleanly:\n{Log}");
        // Whatever the test's clients did to it, the host told each problem with its code.
        ServerLogs.AssertEveryProblemCoded(Log, _task.GetType().Name);
    }
}
