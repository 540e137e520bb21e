using Microsoft.Build.Utilities;

namespace IntegrationTasks.Common;

/// <summary>What the logic classes log through; the tasks adapt MSBuild's logger, tests capture it.</summary>
public interface IEventLog
{
    void Info(string message);
    void Detail(string message);
    void Warning(string code, string message);
    void Error(string code, string message);
}

public sealed class TaskEventLog(TaskLoggingHelper log) : IEventLog
{
    public void Info(string message) => log.LogMessage(MessageImportance.High, "{0}", message);
    public void Detail(string message) => log.LogMessage(MessageImportance.Normal, "{0}", message);
    public void Warning(string code, string message) =>
        log.LogWarning(null, code, null, null, 0, 0, 0, 0, "{0}", message);
    public void Error(string code, string message) =>
        log.LogError(null, code, null, null, 0, 0, 0, 0, "{0}", message);
}

/// <summary>Discards everything; for callers that do not care.</summary>
public sealed class NullEventLog : IEventLog
{
    public static readonly NullEventLog Instance = new();
    public void Info(string message) { }
    public void Detail(string message) { }
    public void Warning(string code, string message) { }
    public void Error(string code, string message) { }
}
