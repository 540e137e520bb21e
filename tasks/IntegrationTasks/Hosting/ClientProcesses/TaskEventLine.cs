using System.Text.Json;
using System.Text.Json.Serialization;

namespace IntegrationTasks.Hosting;

/// <summary>
/// One line a client process writes on its standard output for the build that started it: a log event of its task (a message with
/// its importance, a warning or an error with its code), or the task's result. The build logs each as its own task would have.
/// </summary>
public sealed record TaskEventLine(TaskEventKind Kind, string Text = "", string? Code = null, MessageImportance Importance = MessageImportance.Normal,
    bool Succeeded = false)
{
    private static readonly JsonSerializerOptions Json = new() { Converters = { new JsonStringEnumConverter() } };

    public static TaskEventLine Message(string text, MessageImportance importance) => new(TaskEventKind.Message, text, Importance: importance);
    public static TaskEventLine Warning(string? code, string text) => new(TaskEventKind.Warning, text, code);
    public static TaskEventLine Error(string? code, string text) => new(TaskEventKind.Error, text, code);
    public static TaskEventLine Result(bool succeeded) => new(TaskEventKind.Result, Succeeded: succeeded);

    public string ToLine() => JsonSerializer.Serialize(this, Json);

    /// <summary>A line of the process's output as an event: its JSON, or (anything else the process printed) a message of normal importance.</summary>
    public static TaskEventLine Parse(string line)
    {
        if (line.StartsWith('{'))
        {
            try
            {
                if (JsonSerializer.Deserialize<TaskEventLine>(line, Json) is { } parsed)
                    return parsed;
            }
            catch (JsonException)
            {
                // Printed by something else in the process: kept as text.
            }
        }
        return Message(line, MessageImportance.Normal);
    }
}

public enum TaskEventKind
{
    Message,
    Warning,
    Error,
    Result,
}

/// <summary>
/// The build engine of a task run in a client process: its log goes out as <see cref="TaskEventLine"/>s, its global properties are the
/// build's (so that it behaves as it would there: what it records of a failure, how loud its lines are), and objects it registers live
/// as long as the process. It builds no project.
/// </summary>
public sealed class LineBuildEngine(TextWriter output, IReadOnlyDictionary<string, string> globalProperties, string projectFile) : IBuildEngine6
{
    private readonly Lock _gate = new();
    private readonly Dictionary<object, object> _registered = [];

    /// <summary>While set, messages go out at low importance (a warm-up's lines belong to the detailed log only); warnings and errors do not change.</summary>
    public bool Quiet { get; set; }

    public void Write(TaskEventLine line)
    {
        var text = line.ToLine();
        lock (_gate)
        {
            output.WriteLine(text);
            output.Flush();
        }
    }

    public void LogErrorEvent(BuildErrorEventArgs e) => Write(TaskEventLine.Error(e.Code, e.Message ?? ""));
    public void LogWarningEvent(BuildWarningEventArgs e) => Write(TaskEventLine.Warning(e.Code, e.Message ?? ""));
    public void LogMessageEvent(BuildMessageEventArgs e) => Write(TaskEventLine.Message(e.Message ?? "", Quiet ? MessageImportance.Low : e.Importance));
    public void LogCustomEvent(CustomBuildEventArgs e) => Write(TaskEventLine.Message(e.Message ?? "", MessageImportance.Low));
    public void LogTelemetry(string eventName, IDictionary<string, string> properties) { }

    public bool ContinueOnError => false;
    public int LineNumberOfTaskNode => 0;
    public int ColumnNumberOfTaskNode => 0;
    public string ProjectFileOfTaskNode => projectFile;
    public bool IsRunningMultipleNodes => false;

    public IReadOnlyDictionary<string, string> GetGlobalProperties() => globalProperties;

    public void RegisterTaskObject(object key, object obj, RegisteredTaskObjectLifetime lifetime, bool allowEarlyCollection)
    {
        lock (_gate)
            _registered[key] = obj;
    }

    public object? GetRegisteredTaskObject(object key, RegisteredTaskObjectLifetime lifetime)
    {
        lock (_gate)
            return _registered.GetValueOrDefault(key);
    }

    public object? UnregisterTaskObject(object key, RegisteredTaskObjectLifetime lifetime)
    {
        lock (_gate)
            return _registered.Remove(key, out var removed) ? removed : null;
    }

    public void Yield() { }
    public void Reacquire() { }

    public bool BuildProjectFile(string projectFileName, string[] targetNames, System.Collections.IDictionary globalProperties, System.Collections.IDictionary targetOutputs) =>
        throw NoBuilds();

    public bool BuildProjectFile(string projectFileName, string[] targetNames, System.Collections.IDictionary globalProperties,
        System.Collections.IDictionary targetOutputs, string toolsVersion) => throw NoBuilds();

    public bool BuildProjectFilesInParallel(string[] projectFileNames, string[] targetNames, System.Collections.IDictionary[] globalProperties,
        System.Collections.IDictionary[] targetOutputsPerProject, string[] toolsVersion, bool useResultsCache, bool unloadProjectsOnCompletion) => throw NoBuilds();

    public BuildEngineResult BuildProjectFilesInParallel(string[] projectFileNames, string[] targetNames, System.Collections.IDictionary[] globalProperties,
        IList<string>[] removeGlobalProperties, string[] toolsVersion, bool returnTargetOutputs) => throw NoBuilds();

    private static NotSupportedException NoBuilds() => new("A client process runs one task; it builds no project.");
}
