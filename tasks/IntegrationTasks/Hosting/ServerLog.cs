using Microsoft.Build.Utilities;

namespace IntegrationTasks.Hosting;

/// <summary>
/// Forwards a server's output into the build log: its coded errors as errors and its coded warnings as
/// warnings, each keeping its code; the rest as detail.
/// </summary>
internal static class ServerLog
{
    public static Action<string> To(TaskLoggingHelper log, string name, MessageImportance rest = MessageImportance.Low) => line =>
    {
        if (!CodedError.TryParseLogLine(line, out var isError, out var code, out var message))
            log.LogMessage(rest, "[{0}] {1}", name, line);
        else if (isError)
            log.LogError(null, code, null, null, 0, 0, 0, 0, "[{0}] {1}", name, message);
        else
            log.LogWarning(null, code, null, null, 0, 0, 0, 0, "[{0}] {1}", name, message);
    };
}
