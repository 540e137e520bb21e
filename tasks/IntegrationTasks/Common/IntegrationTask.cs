using MsTask = Microsoft.Build.Utilities.Task;

namespace IntegrationTasks.Common;

/// <summary>
/// Base of every task in the suite: a thin <see cref="Execute"/> that runs the async core once,
/// turns <see cref="IntegrationException"/> into a coded error, treats cancellation as a quiet
/// failure and never lets an exception escape to MSBuild.
/// </summary>
public abstract class IntegrationTask : MsTask, ICancelableTask
{
    private readonly CancellationTokenSource _cancellation = new();

    protected CancellationToken CancellationToken => _cancellation.Token;

    /// <summary>Servers end by being cancelled; for them that is a clean stop, not a failure.</summary>
    protected virtual bool CancellationIsSuccess => false;

    public void Cancel() => _cancellation.Cancel();

    public sealed override bool Execute()
    {
        try
        {
            // Blocked on exactly once, at the MSBuild boundary. The core runs on the thread pool: MSBuild runs a task inside a Task
            // of its own scheduler, which Task.Yield and un-configured awaits would post to, and which gives each a thread of its
            // own that it keeps to the end of the build.
            Task.Run(() => ExecuteAsync(_cancellation.Token)).GetAwaiter().GetResult();
        }
        catch (OperationCanceledException) when (_cancellation.IsCancellationRequested)
        {
            if (CancellationIsSuccess)
                return !Log.HasLoggedErrors;
            Log.LogWarning("{0} was cancelled.", GetType().Name);
            return false;
        }
        catch (IntegrationException e)
        {
            LogError(e);
        }
        catch (Exception e)
        {
            Log.LogError(null, ErrorCodes.Unexpected, null, null, 0, 0, 0, 0,
                "{0} failed unexpectedly: {1}", GetType().Name, e.Message);
            RecordFailure(ErrorCodes.Unexpected, $"{GetType().Name} failed unexpectedly: {e.Message}");
            Log.LogMessage(MessageImportance.Low, e.ToString());
        }
        return !Log.HasLoggedErrors && (CancellationIsSuccess || !_cancellation.IsCancellationRequested);
    }

    protected abstract Task ExecuteAsync(CancellationToken cancellationToken);

    protected void LogError(IntegrationException e)
    {
        Log.LogError(null, e.Code, null, null, 0, 0, 0, 0, "{0}", e.Message);
        RecordFailure(e.Code, e.Message);
        if (e.InnerException is not null)
            Log.LogMessage(MessageImportance.Low, e.InnerException.ToString());
    }

    /// <summary>Under RunAll, a coded error is also kept for the report (<see cref="RunFailures"/>).</summary>
    private void RecordFailure(string code, string message)
    {
        if (BuildEngine is IBuildEngine6 engine)
            RunFailures.Append(engine.GetGlobalProperties(), code, message);
    }

    /// <summary>
    /// A client run's own lines (its size, its time, "Verified"): on the screen when a person runs one client, at normal importance
    /// inside RunAll, whose one line per run ("… repetition 3 of 10: 0.176 s, …, verified") says the same.
    /// </summary>
    protected MessageImportance RunDetail =>
        BuildEngine is IBuildEngine6 engine && engine.GetGlobalProperties().ContainsKey(RunAllProperty) ? MessageImportance.Normal : MessageImportance.High;

    /// <summary>The global property RunAll gives every build below it (its start time).</summary>
    public const string RunAllProperty = "RunAllStartedAt";

    /// <summary>Adapts the task's logger for the plain classes that do the work.</summary>
    protected IEventLog EventLog => new TaskEventLog(Log);
}
