using Microsoft.Build.Framework;
using Microsoft.Build.Utilities;

namespace IntegrationTasks.Hosting;

/// <summary>Forwards a server's output into the build log: its warnings and errors as warnings, the rest as detail.</summary>
internal static class ServerLog
{
    public static Action<string> To(TaskLoggingHelper log, string name) => line =>
    {
        if (line.Contains(": warning IT", StringComparison.Ordinal) || line.Contains(": error IT", StringComparison.Ordinal))
            log.LogWarning("[{0}] {1}", name, line.Trim());
        else
            log.LogMessage(MessageImportance.Low, "[{0}] {1}", name, line);
    };
}
