using System.Collections;
using Microsoft.Build.Framework;

namespace IntegrationTasks.Tests;

/// <summary>An in-memory build engine: records every event and keeps registered task objects.</summary>
internal sealed class FakeBuildEngine : IBuildEngine6
{
    private readonly Dictionary<(object, RegisteredTaskObjectLifetime), object> _objects;
    private readonly object _gate = new();

    public FakeBuildEngine() => _objects = [];

    /// <summary>Another task of the same build: its own log, the build's registered objects.</summary>
    public FakeBuildEngine(FakeBuildEngine build) => _objects = build._objects;

    public List<BuildErrorEventArgs> Errors { get; } = [];
    public List<BuildWarningEventArgs> Warnings { get; } = [];
    public List<BuildMessageEventArgs> Messages { get; } = [];

    public string Log
    {
        get
        {
            lock (_gate)
                return string.Join("\n", Errors.Select(e => $"error {e.Code}: {e.Message}")
                    .Concat(Warnings.Select(w => $"warning {w.Code}: {w.Message}"))
                    .Concat(Messages.Select(m => m.Message)));
        }
    }

    public bool HasErrorCode(string code)
    {
        lock (_gate)
            return Errors.Any(e => e.Code == code);
    }

    public void LogErrorEvent(BuildErrorEventArgs e) { lock (_gate) Errors.Add(e); }
    public void LogWarningEvent(BuildWarningEventArgs e) { lock (_gate) Warnings.Add(e); }
    public void LogMessageEvent(BuildMessageEventArgs e) { lock (_gate) Messages.Add(e); }
    public void LogCustomEvent(CustomBuildEventArgs e) { }

    public bool ContinueOnError => false;
    public int LineNumberOfTaskNode => 0;
    public int ColumnNumberOfTaskNode => 0;
    public string ProjectFileOfTaskNode => "test.proj";
    public bool IsRunningMultipleNodes => false;

    public bool BuildProjectFile(string projectFileName, string[] targetNames, IDictionary globalProperties, IDictionary targetOutputs) =>
        throw new NotSupportedException();
    public bool BuildProjectFile(string projectFileName, string[] targetNames, IDictionary globalProperties, IDictionary targetOutputs, string toolsVersion) =>
        throw new NotSupportedException();
    public bool BuildProjectFilesInParallel(string[] projectFileNames, string[] targetNames, IDictionary[] globalProperties,
        IDictionary[] targetOutputsPerProject, string[] toolsVersion, bool useResultsCache, bool unloadProjectsOnCompletion) =>
        throw new NotSupportedException();
    public BuildEngineResult BuildProjectFilesInParallel(string[] projectFileNames, string[] targetNames, IDictionary[] globalProperties,
        IList<string>[] removeGlobalProperties, string[] toolsVersion, bool returnTargetOutputs) =>
        throw new NotSupportedException();

    /// <summary>What the build was started with (-p:); empty unless a test sets some.</summary>
    public Dictionary<string, string> GlobalProperties { get; } = new(StringComparer.OrdinalIgnoreCase);

    public IReadOnlyDictionary<string, string> GetGlobalProperties() => GlobalProperties;

    public void LogTelemetry(string eventName, IDictionary<string, string> properties) { }

    public void Yield() { }
    public void Reacquire() { }

    public void RegisterTaskObject(object key, object obj, RegisteredTaskObjectLifetime lifetime, bool allowEarlyCollection)
    {
        lock (_gate)
            _objects.TryAdd((key, lifetime), obj);
    }

    public object? GetRegisteredTaskObject(object key, RegisteredTaskObjectLifetime lifetime)
    {
        lock (_gate)
            return _objects.GetValueOrDefault((key, lifetime));
    }

    public object? UnregisterTaskObject(object key, RegisteredTaskObjectLifetime lifetime)
    {
        lock (_gate)
            return _objects.Remove((key, lifetime), out var value) ? value : null;
    }

    /// <summary>What MSBuild does at the end of a build: dispose what is still registered.</summary>
    public void EndBuild()
    {
        List<object> objects;
        lock (_gate)
        {
            objects = [.. _objects.Values];
            _objects.Clear();
        }
        foreach (var disposable in objects.OfType<IDisposable>())
            disposable.Dispose();
    }
}
