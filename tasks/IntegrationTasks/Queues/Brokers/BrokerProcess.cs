using IntegrationTasks.Hosting;

namespace IntegrationTasks.Queues;

/// <summary>How to run one broker program: its folder, the configuration written there, its arguments, the line that says it is ready.</summary>
public sealed record BrokerProgram
{
    /// <summary>Its name in messages and the build's log ("NATS").</summary>
    public required string Name { get; init; }
    public required string Program { get; init; }
    public required string InstallCommand { get; init; }

    /// <summary>Its folder: the configuration, the log and the data.</summary>
    public required string Directory { get; init; }
    public required string ConfigFileName { get; init; }
    public required string Configuration { get; init; }

    /// <summary>The program's arguments, given the configuration file's path.</summary>
    public required Func<string, IReadOnlyList<string>> Arguments { get; init; }
    public required string ReadyMarker { get; init; }
    public required string LogFileName { get; init; }

    /// <summary>A command the program runs through (<c>ip netns exec NAME</c> on two hosts).</summary>
    public IReadOnlyList<string> CommandPrefix { get; init; } = [];
}

/// <summary>
/// A broker program the build runs (Debian's nats-server, redis-server): a configuration written into its own folder, ready when it
/// logs its ready line; stopped with SIGTERM, which both take as a clean shutdown (their data flushed), then as every server is
/// stopped (its input closed, SIGINT) and killed only if it has still not exited.
/// </summary>
public sealed class BrokerProcess<TOptions> : IDisposable
{
    private ServerProcess? _process;

    private BrokerProcess(TOptions options) => Options = options;

    public TOptions Options { get; }

    /// <summary>Its process (the current one, when started again after an exit: <see cref="ServerProcess.RestartOnExit"/>).</summary>
    public ServerProcess Process => _process ?? throw new ObjectDisposedException(nameof(BrokerProcess<TOptions>));
    public int ProcessId => _process?.ProcessId ?? 0;

    public static async Task<BrokerProcess<TOptions>> StartAsync(TOptions options, BrokerProgram program, Action<string>? log, TimeSpan timeout,
        CancellationToken cancellationToken)
    {
        if (!File.Exists(program.Program))
            throw new IntegrationException(ErrorCodes.BrokerUnavailable,
                $"{program.Name} is not installed ({program.Program} is missing). Install it with: {program.InstallCommand}");
        Common.OwnerOnlyFiles.CreateDirectory(program.Directory); // its data and configuration: the broker's owner's alone
        var configFile = Path.Combine(program.Directory, program.ConfigFileName);
        // The owner's only: it may hold the broker's user and password.
        OwnerOnlyFiles.Write(configFile, program.Configuration);
        var broker = new BrokerProcess<TOptions>(options);
        var launch = new ServerLaunch(program.Program, program.Arguments(configFile), program.Directory).WithPrefix(program.CommandPrefix);
        broker._process = ServerProcess.Start(program.Name, launch, Path.Combine(program.Directory, program.LogFileName), log, program.ReadyMarker);
        try
        {
            await broker._process.WaitReadyAsync(timeout, cancellationToken).ConfigureAwait(false);
            return broker;
        }
        catch
        {
            await broker.StopAsync(CancellationToken.None).ConfigureAwait(false);
            broker.Dispose();
            throw;
        }
    }

    public async Task StopAsync(CancellationToken cancellationToken)
    {
        if (_process is not { } process)
            return;
        await process.EndRestartsAsync(cancellationToken).ConfigureAwait(false);
        if (process.HasExited)
            return;
        ProcessTree.Signal(process.ProcessId, ProcessTree.SigTerm);
        if (await process.StopAsync(TimeSpan.FromSeconds(30), cancellationToken).ConfigureAwait(false) is null)
            process.Kill();
    }

    public void Dispose()
    {
        _process?.Dispose();
        _process = null;
    }
}
