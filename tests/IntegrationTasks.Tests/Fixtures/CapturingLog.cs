namespace IntegrationTasks.Tests;

/// <summary>Records what the server logs, so tests can see its coded warnings.</summary>
internal sealed class CapturingLog : IEventLog
{
    private readonly List<string> _lines = [];
    public List<string> Lines { get { lock (_lines) return [.. _lines]; } }
    public void Info(string message) { lock (_lines) _lines.Add(message); }
    public void Detail(string message) { lock (_lines) _lines.Add(message); }
    public void Warning(string code, string message) { lock (_lines) _lines.Add($"warning {code}: {message}"); }
    public void Error(string code, string message) { lock (_lines) _lines.Add($"error {code}: {message}"); }
}
