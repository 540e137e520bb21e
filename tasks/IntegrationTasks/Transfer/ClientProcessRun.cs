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
        // The run's file names the process among the others (it is no secret; the request, with the connection strings, goes on its input).
        var runFile = request.Shared.GetValueOrDefault(nameof(RunTransferClient.ResultFile)) is { Length: > 0 } file ? new[] { file } : [];
        var launch = new ServerLaunch(ServerLaunch.DotnetHost, [hostAssembly, ClientHost.Verb, .. runFile],
            Path.GetDirectoryName(engine.ProjectFileOfTaskNode) is { Length: > 0 } folder ? folder : Directory.GetCurrentDirectory());
        using var process = ClientProcess.Start(launch);
        using var stopOnTermination = BuildTermination.StopOnTermination(() =>
        {
            process.Kill();
            return Task.CompletedTask;
        });
        log.LogMessage(MessageImportance.Low, "{0}: client process {1} ({2}).", request.TaskName, process.ProcessId, request.Mode);
        var limit = TimeSpan.FromSeconds(request.Number(nameof(RunTransferClient.TimeoutSeconds), SettingDefaults.TimeoutSeconds)) + StartAllowance;
        var outcome = await process.RunAsync(request.ToJson(), Forward, limit, cancellationToken).ConfigureAwait(false);
        if (outcome.Succeeded is { } succeeded)
            return succeeded && !log.HasLoggedErrors;
        if (cancellationToken.IsCancellationRequested)
        {
            log.LogWarning("{0} was cancelled.", request.TaskName);
            return false;
        }
        if (outcome.Killed)
            return Fail(request, ErrorCodes.Timeout,
                $"{request.TaskName}'s client process {process.ProcessId} did not end within {limit.TotalSeconds:F0} s (TimeoutSeconds and its start); it was killed.");
        var signal = outcome.ExitCode > 128 ? $", the signal {outcome.ExitCode - 128}" : "";
        return Fail(request, ErrorCodes.ClientProcessFailed,
            $"{request.TaskName}'s client process {process.ProcessId} ended (exit code {outcome.ExitCode}{signal}) before its run finished; the run is not measured.");
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
/// The client mode of the suite's host (<c>IntegrationTasks.Host.dll client</c>): reads one <see cref="ClientRunRequest"/> from its
/// input, runs the transport's client task in this process (after its warm-up, when Warmed), writes its log and result as
/// <see cref="TaskEventLine"/>s and exits. A "cancel" line, its input closing (the build gone), SIGINT or SIGTERM cancel the run.
/// </summary>
public static class ClientHost
{
    public const string Verb = "client";

    private static readonly TimeSpan RequestTimeout = TimeSpan.FromSeconds(60);

    public static async Task<int> RunAsync(TextReader input, TextWriter output)
    {
        var started = Process.GetCurrentProcess().StartTime;
        ClientRunRequest request;
        try
        {
            var line = await input.ReadLineAsync().WaitAsync(RequestTimeout).ConfigureAwait(false)
                       ?? throw new JsonException("its input closed before a request came");
            request = ClientRunRequest.FromJson(line);
        }
        catch (Exception e) when (e is JsonException or TimeoutException or NotSupportedException)
        {
            output.WriteLine(TaskEventLine.Error(ErrorCodes.InvalidParameter, $"The client process got no run to make: {e.Message}").ToLine());
            return 2;
        }
        var engine = new LineBuildEngine(output, request.GlobalProperties, request.ProjectFile);
        ClientProcessContext.Mode = request.Warms ? ClientProcessMode.Warmed : request.Mode == ClientProcessMode.Build ? ClientProcessMode.Build : ClientProcessMode.Fresh;
        using var cancellation = new CancellationTokenSource();
        RunTransferClient? running = null;
        var gate = new Lock();
        void Cancel()
        {
            lock (gate)
            {
                if (cancellation.IsCancellationRequested)
                    return;
                cancellation.Cancel();
                running?.Cancel();
            }
            // A task that does not end once cancelled does not keep the process: the build has stopped waiting for it.
            _ = Task.Delay(ClientProcess.CancelGrace).ContinueWith(_ => Environment.Exit(BuildTermination.ExitCode), TaskScheduler.Default);
        }
        _ = Task.Run(async () =>
        {
            while (await input.ReadLineAsync().ConfigureAwait(false) is { } line && line != ClientProcess.CancelLine)
            {
            }
            Cancel();
        });
        using var interrupt = PosixSignalRegistration.Create(PosixSignal.SIGINT, Cancelled);
        using var terminate = PosixSignalRegistration.Create(PosixSignal.SIGTERM, Cancelled);
        void Cancelled(PosixSignalContext context)
        {
            context.Cancel = true;
            Cancel();
        }

        bool Run(IReadOnlyDictionary<string, string> shared)
        {
            var task = new RunTransferClient
            {
                TaskName = request.TaskName, Parameters = request.Parameters, GivenSharedParameters = shared, BuildEngine = engine,
                ClientProcess = nameof(ClientProcessMode.Build), // here, in this process
            };
            lock (gate)
            {
                if (cancellation.IsCancellationRequested)
                    task.Cancel();
                running = task;
            }
            return task.Execute();
        }

        ClientProcessContext.StartSeconds = Math.Max(0, (DateTime.Now - started).TotalSeconds);
        var succeeded = true;
        if (ClientProcessContext.Mode == ClientProcessMode.Warmed)
        {
            var warmup = Stopwatch.StartNew();
            engine.Quiet = true;
            succeeded = Run(request.WarmupShared()) && await EmptyClientTableAsync(request, engine, cancellation.Token).ConfigureAwait(false);
            engine.Quiet = false;
            ClientProcessContext.WarmupSeconds = warmup.Elapsed.TotalSeconds;
        }
        if (succeeded && !cancellation.IsCancellationRequested)
            succeeded = Run(request.Shared);
        engine.Write(TaskEventLine.Result(succeeded && !cancellation.IsCancellationRequested));
        return 0;
    }

    private static async Task<bool> EmptyClientTableAsync(ClientRunRequest request, LineBuildEngine engine, CancellationToken cancellationToken)
    {
        try
        {
            var provider = request.Shared.GetValueOrDefault(nameof(RunTransferClient.ClientProvider)) is { Length: > 0 } given ? given : RunKey.DefaultProvider;
            var database = Database.Create(provider, request.Shared.GetValueOrDefault(nameof(RunTransferClient.ClientConnString)) ?? "");
            await database.EmptyAsync(RecordTable.Client, cancellationToken).ConfigureAwait(false);
            return true;
        }
        catch (IntegrationException e)
        {
            engine.Write(TaskEventLine.Error(e.Code, $"ClientTable could not be emptied after the warm-up: {e.Message}"));
            return false;
        }
        catch (OperationCanceledException)
        {
            return false;
        }
    }
}
