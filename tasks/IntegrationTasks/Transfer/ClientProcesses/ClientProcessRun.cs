using System.Diagnostics;
using System.Globalization;
using System.Runtime.InteropServices;
using System.Text.Json;
using System.Text.Json.Serialization;
using IntegrationTasks.Data;
using IntegrationTasks.Hosting;
using TaskLoggingHelper = Microsoft.Build.Utilities.TaskLoggingHelper;

namespace IntegrationTasks.Transfer;

/// <summary>What the build hands a client process: the task and its parameters as RunTransferClient was given them, and the build's context.</summary>
internal sealed record ClientRunRequest(string TaskName, string[] Parameters, Dictionary<string, string> Shared,
    Dictionary<string, string> GlobalProperties, string ProjectFile, ClientProcessMode Mode, int WarmupBatches)
{
    internal static readonly JsonSerializerOptions Json = new() { Converters = { new JsonStringEnumConverter() } };

    public string ToJson() => JsonSerializer.Serialize(this, Json);

    public static ClientRunRequest FromJson(string json) =>
        JsonSerializer.Deserialize<ClientRunRequest>(json, Json) ?? throw new JsonException("null");

    /// <summary>The same run cut to its warm-up: its first batches (at least one a client), no figures written, no agreed start.</summary>
    public Dictionary<string, string> WarmupShared()
    {
        var clients = Number(nameof(RunTransferClient.Clients), 1);
        var batches = Math.Min(Number(nameof(RunTransferClient.TotalBatches), WarmupBatches), Math.Max(WarmupBatches, clients));
        return new Dictionary<string, string>(Shared)
        {
            [nameof(RunTransferClient.TotalBatches)] = batches.ToString(CultureInfo.InvariantCulture),
            [nameof(RunTransferClient.ResultFile)] = "",
            [nameof(RunTransferClient.StartAt)] = "",
        };
    }

    /// <summary>A run under a fault warms nothing: its relay would inject the fault into the warm-up instead.</summary>
    public bool Warms => Mode == ClientProcessMode.Warmed && Shared.GetValueOrDefault(nameof(RunTransferClient.Fault)) is null or "" or "None";

    public int Number(string name, int otherwise) =>
        int.TryParse(Shared.GetValueOrDefault(name), NumberStyles.Integer, CultureInfo.InvariantCulture, out var value) ? value : otherwise;
}

/// <summary>
/// The build's side of a client run in a process of its own: starts the suite's host in its client mode, hands it the request, logs its
/// events as the task's own, and turns a process that ended without a result into a coded failure of the run (IT4016), recorded for
/// the report as any other. A build terminated meanwhile kills it.
/// </summary>
internal sealed class ClientProcessRun(TaskLoggingHelper log, IBuildEngine engine, string hostAssembly)
{
    /// <summary>Beyond the run's own timeout: the process's start and its warm-up.</summary>
    private static readonly TimeSpan StartAllowance = TimeSpan.FromMinutes(5);

    public async Task<bool> RunAsync(ClientRunRequest request, CancellationToken cancellationToken)
    {
        if (string.IsNullOrEmpty(hostAssembly) || !File.Exists(hostAssembly))
            return Fail(request, ErrorCodes.ClientProcessFailed,
                $"The suite's host, which runs each client in a process of its own, is not at '{hostAssembly}' (ClientHostAssembly): build the tasks, or set ClientProcess=Build.");
        LaunchedClient? started = null;
        LaunchedClient process;
        try
        {
            process = request.Mode == ClientProcessMode.Transport ? KeptProcess(request) : started = Start(request);
        }
        catch (IntegrationException e)
        {
            return Fail(request, e.Code, e.Message);
        }
        using var ownProcess = started;
        log.LogMessage(MessageImportance.Low, "{0}: client process {1} ({2}).", request.TaskName, process.Process.ProcessId, request.Mode);
        var limit = TimeSpan.FromSeconds(request.Number(nameof(RunTransferClient.TimeoutSeconds), SettingDefaults.TimeoutSeconds)) + StartAllowance;
        var outcome = await process.Process.RunAsync(request.ToJson(), Forward, limit, cancellationToken).ConfigureAwait(false);
        if (outcome.Succeeded is { } succeeded)
            return succeeded && !log.HasLoggedErrors;
        if (cancellationToken.IsCancellationRequested)
        {
            log.LogWarning("{0} was cancelled.", request.TaskName);
            return false;
        }
        if (outcome.Killed)
            return Fail(request, ErrorCodes.Timeout,
                $"{request.TaskName}'s client process {process.Process.ProcessId} did not end within {limit.TotalSeconds:F0} s (TimeoutSeconds and its start); it was killed.");
        var signal = outcome.ExitCode > 128 ? $", the signal {outcome.ExitCode - 128}" : "";
        return Fail(request, ErrorCodes.ClientProcessFailed,
            $"{request.TaskName}'s client process {process.Process.ProcessId} ended (exit code {outcome.ExitCode}{signal}) before its run finished; the run is not measured.");
    }

    /// <summary>A client process for this run alone, or the first of a transport's kept one; stopped with the build if it is terminated.</summary>
    private LaunchedClient Start(ClientRunRequest request)
    {
        // The run's file names the process among the others (it is no secret; the request, with the connection strings, goes on its input).
        var runFile = request.Shared.GetValueOrDefault(nameof(RunTransferClient.ResultFile)) is { Length: > 0 } file ? new[] { file } : [];
        var launch = new ServerLaunch(ServerLaunch.DotnetHost, [hostAssembly, ClientHost.Verb, .. runFile],
            Path.GetDirectoryName(engine.ProjectFileOfTaskNode) is { Length: > 0 } folder ? folder : Directory.GetCurrentDirectory());
        var process = ClientProcess.Start(launch);
        return new LaunchedClient(process, BuildTermination.StopOnTermination(() =>
        {
            process.Kill();
            return Task.CompletedTask;
        }));
    }

    /// <summary>
    /// The transport's process kept for the build (ClientProcess=Transport): every run of the same client task and parameters goes to
    /// it, one after the other; a new one where it has ended. MSBuild disposes it when the build ends.
    /// </summary>
    private LaunchedClient KeptProcess(ClientRunRequest request)
    {
        var key = $"IntegrationTasks.ClientProcess/{request.TaskName}/{string.Join(';', request.Parameters)}";
        var engine4 = (IBuildEngine4)engine;
        if (engine4.GetRegisteredTaskObject(key, RegisteredTaskObjectLifetime.Build) is LaunchedClient { Process.Usable: true } kept)
            return kept;
        (engine4.UnregisterTaskObject(key, RegisteredTaskObjectLifetime.Build) as IDisposable)?.Dispose();
        var started = Start(request);
        engine4.RegisterTaskObject(key, started, RegisteredTaskObjectLifetime.Build, allowEarlyCollection: false);
        return started;
    }

    private sealed class LaunchedClient(ClientProcess process, IDisposable stopOnTermination) : IDisposable
    {
        public ClientProcess Process { get; } = process;

        public void Dispose()
        {
            Process.Dispose();
            stopOnTermination.Dispose();
        }
    }

    private void Forward(TaskEventLine line)
    {
        switch (line.Kind)
        {
            case TaskEventKind.Error:
                log.LogError(null, line.Code, null, null, 0, 0, 0, 0, "{0}", line.Text);
                break;
            case TaskEventKind.Warning:
                log.LogWarning(null, line.Code, null, null, 0, 0, 0, 0, "{0}", line.Text);
                break;
            default:
                log.LogMessage(line.Importance, "{0}", line.Text);
                break;
        }
    }

    /// <summary>A failure the process could not record itself: logged, and kept for the report under RunAll.</summary>
    private bool Fail(ClientRunRequest request, string code, string message)
    {
        log.LogError(null, code, null, null, 0, 0, 0, 0, "{0}", message);
        RunFailures.Append(request.GlobalProperties, code, message);
        return false;
    }
}

/// <summary>
/// The client mode of the suite's host (<c>IntegrationTasks.Host.dll client</c>): reads <see cref="ClientRunRequest"/>s from its input,
/// one line each, and runs each transport's client task in this process (after its warm-up, when Warmed), writing its log and result
/// as <see cref="TaskEventLine"/>s; it ends when its input closes. A "cancel" line, its input closing (the build gone), SIGINT or
/// SIGTERM cancel the run it is making.
/// </summary>
public static class ClientHost
{
    public const string Verb = "client";

    public static async Task<int> RunAsync(TextReader input, TextWriter output)
    {
        var started = Process.GetCurrentProcess().StartTime;
        var requests = System.Threading.Channels.Channel.CreateBounded<string>(1);
        var gate = new Lock();
        RunTransferClient? running = null;
        var cancelled = false;
        var busy = false;
        void Cancel()
        {
            lock (gate)
            {
                cancelled = true;
                running?.Cancel();
            }
        }
        _ = Task.Run(async () =>
        {
            while (await input.ReadLineAsync().ConfigureAwait(false) is { } line)
            {
                if (line == ClientProcess.CancelLine)
                    Cancel();
                else
                    await requests.Writer.WriteAsync(line).ConfigureAwait(false);
            }
            // The build has closed its end (done with this process, or gone): a run still going is cancelled, and no longer waited for
            // than the build would wait.
            // A request still queued when the build went is cancelled too (cancelled stays set).
            requests.Writer.Complete();
            Cancel();
            await Task.Delay(ClientProcess.CancelGrace).ConfigureAwait(false);
            lock (gate)
            {
                if (busy)
                    Environment.Exit(BuildTermination.ExitCode);
            }
        });
        // A signal cancels the run being made, which then ends the process; an idle process takes the signal's default and ends.
        void Cancelled(PosixSignalContext context)
        {
            lock (gate)
                context.Cancel = busy;
            Cancel();
        }
        using var interrupt = PosixSignalRegistration.Create(PosixSignal.SIGINT, Cancelled);
        using var terminate = PosixSignalRegistration.Create(PosixSignal.SIGTERM, Cancelled);

        var runs = 0;
        await foreach (var line in requests.Reader.ReadAllAsync().ConfigureAwait(false))
        {
            ClientRunRequest request;
            try
            {
                request = ClientRunRequest.FromJson(line);
            }
            catch (Exception e) when (e is JsonException or NotSupportedException)
            {
                output.WriteLine(TaskEventLine.Error(ErrorCodes.InvalidParameter, $"The client process got no run to make: {e.Message}").ToLine());
                output.WriteLine(TaskEventLine.Result(false).ToLine());
                return 2;
            }
            lock (gate)
                busy = true;
            var engine = new LineBuildEngine(output, request.GlobalProperties, request.ProjectFile);
            ClientProcessContext.Mode = request.Warms ? ClientProcessMode.Warmed : request.Mode == ClientProcessMode.Warmed ? ClientProcessMode.Fresh : request.Mode;
            ClientProcessContext.StartSeconds = runs == 0 ? Math.Max(0, (DateTime.Now - started).TotalSeconds) : null;
            ClientProcessContext.RunsBefore = runs;
            ClientProcessContext.WarmupSeconds = null;

            bool Run(IReadOnlyDictionary<string, string> shared)
            {
                var task = new RunTransferClient
                {
                    TaskName = request.TaskName, Parameters = request.Parameters, GivenSharedParameters = shared, BuildEngine = engine,
                    ClientProcess = nameof(ClientProcessMode.Build), // here, in this process
                };
                lock (gate)
                {
                    if (cancelled)
                        task.Cancel();
                    running = task;
                }
                return task.Execute();
            }

            var succeeded = true;
            if (ClientProcessContext.Mode == ClientProcessMode.Warmed)
            {
                var warmup = Stopwatch.StartNew();
                engine.Quiet = true;
                succeeded = Run(request.WarmupShared()) && await EmptyClientTableAsync(request, engine).ConfigureAwait(false);
                engine.Quiet = false;
                ClientProcessContext.WarmupSeconds = warmup.Elapsed.TotalSeconds;
            }
            if (succeeded && !cancelled)
                succeeded = Run(request.Shared);
            lock (gate)
                busy = false;
            engine.Write(TaskEventLine.Result(succeeded && !cancelled));
            runs++;
            if (cancelled)
                break; // a cancelled process makes no more runs: the build starts another if it needs one
        }
        return 0;
    }

    private static async Task<bool> EmptyClientTableAsync(ClientRunRequest request, LineBuildEngine engine)
    {
        try
        {
            var provider = request.Shared.GetValueOrDefault(nameof(RunTransferClient.ClientProvider)) is { Length: > 0 } given ? given : RunKey.DefaultProvider;
            var database = Database.Create(provider, request.Shared.GetValueOrDefault(nameof(RunTransferClient.ClientConnString)) ?? "");
            await database.EmptyAsync(RecordTable.Client, CancellationToken.None).ConfigureAwait(false);
            return true;
        }
        catch (IntegrationException e)
        {
            engine.Write(TaskEventLine.Error(e.Code, $"ClientTable could not be emptied after the warm-up: {e.Message}"));
            return false;
        }
    }
}
