using System.Globalization;
using System.Reflection;
using IntegrationTasks.Common;
using Microsoft.Build.Framework;

namespace IntegrationTasks.Transfer;

/// <summary>
/// Runs the transfer task a transport's definition names (its class: TcpClient2, SoapServer …) with the parameters every
/// such task shares, given once here, and the transport's own (<see cref="Parameters"/>, "Name=Value" each, from its family's
/// targets file): the one client target and the one server target use this instead of a copy of the task's XML per transport.
/// As in MSBuild's own task XML, an empty value leaves the parameter at its default, and a [Required] one left empty is an
/// error (IT1001); the task then runs as it would on its own — its log, its errors, its cancellation.
/// </summary>
public abstract class NamedTransferTask<TTask> : Microsoft.Build.Utilities.Task, ICancelableTask where TTask : IntegrationTask
{
    /// <summary>The task's class name (TcpClient2).</summary>
    [Required] public string TaskName { get; set; } = "";

    /// <summary>The transport's own parameters, "Name=Value" (the value may hold '=' but not ';').</summary>
    public string[] Parameters { get; set; } = [];

    private TTask? _task;
    private volatile bool _cancelled;

    /// <summary>
    /// The shared parameters as this task was given them: the string properties a subclass declares, each named as the
    /// <typeparamref name="TTask"/> property it is passed to.
    /// </summary>
    private IEnumerable<(string Name, string Value)> SharedParameters() =>
        GetType().GetProperties(BindingFlags.Public | BindingFlags.Instance | BindingFlags.DeclaredOnly)
            .Where(p => p.PropertyType == typeof(string))
            .Select(p => (p.Name, (string)p.GetValue(this)!));

    private static readonly IReadOnlyDictionary<string, Type> Tasks = typeof(TTask).Assembly.GetTypes()
        .Where(t => typeof(TTask).IsAssignableFrom(t) && t is { IsAbstract: false, IsPublic: true })
        .ToDictionary(t => t.Name, StringComparer.Ordinal);

    public override bool Execute()
    {
        try
        {
            _task = Create();
        }
        catch (IntegrationException e)
        {
            Log.LogError(null, e.Code, null, null, 0, 0, 0, 0, "{0}", e.Message);
            return false;
        }
        if (_cancelled)
            _task.Cancel();
        return _task.Execute();
    }

    public void Cancel()
    {
        _cancelled = true;
        _task?.Cancel();
    }

    /// <summary>The named task with every parameter set, ready to execute.</summary>
    internal TTask Create()
    {
        if (!Tasks.TryGetValue(TaskName, out var type))
            throw new IntegrationException(ErrorCodes.InvalidParameter,
                $"No {typeof(TTask).Name} is named '{TaskName}' (known: {string.Join(", ", Tasks.Keys.Order(StringComparer.Ordinal))}).");
        var task = (TTask)Activator.CreateInstance(type)!;
        task.BuildEngine = BuildEngine;
        task.HostObject = HostObject;
        var given = new HashSet<string>(StringComparer.Ordinal);
        // A shared parameter goes to every task that takes it (the in-process copies also read the server's database); a transport's own
        // parameter must be one its task takes.
        foreach (var (name, value, shared) in SharedParameters().Select(p => (p.Name, p.Value, true)).Concat(Parameters.Select(Split).Select(p => (p.Name, p.Value, false))))
        {
            if (value.Length == 0)
                continue; // as MSBuild does with an attribute that evaluates to nothing: the default stays
            var property = Settable(type, name);
            if (property is null)
            {
                if (shared)
                    continue;
                throw Unknown(type, TaskName, name);
            }
            property.SetValue(task, Convert(name, value, property.PropertyType));
            given.Add(name);
        }
        var missing = type.GetProperties(BindingFlags.Public | BindingFlags.Instance)
            .Where(p => p.GetCustomAttribute<RequiredAttribute>() is not null && !given.Contains(p.Name)).Select(p => p.Name).ToList();
        if (missing.Count > 0)
            throw new IntegrationException(ErrorCodes.InvalidParameter, $"{TaskName} needs {string.Join(", ", missing)}.");
        return task;
    }

    private (string Name, string Value) Split(string parameter) => Split(TaskName, parameter);

    private static (string Name, string Value) Split(string taskName, string parameter) =>
        parameter.IndexOf('=', StringComparison.Ordinal) is var at and > 0
            ? (parameter[..at].Trim(), parameter[(at + 1)..].Trim())
            : throw new IntegrationException(ErrorCodes.InvalidParameter, $"{taskName}'s parameter '{parameter}' is not Name=Value.");

    private static PropertyInfo? Settable(Type type, string name) =>
        type.GetProperty(name, BindingFlags.Public | BindingFlags.Instance) is { CanWrite: true, SetMethod.IsPublic: true } property ? property : null;

    private static IntegrationException Unknown(Type type, string taskName, string name) =>
        new(ErrorCodes.InvalidParameter, $"{taskName} has no parameter {name} (known: {string.Join(", ",
            type.GetProperties(BindingFlags.Public | BindingFlags.Instance).Where(p => Settable(type, p.Name) is not null && p.DeclaringType != typeof(Microsoft.Build.Utilities.Task))
                .Select(p => p.Name).Order(StringComparer.Ordinal))}).");

    /// <summary>
    /// The problem with a transport's own parameters, before any run: a task name that names no task, a parameter that is not
    /// Name=Value or that its task does not take (the known names listed); null when there is none. Values are not converted here:
    /// they may come from properties set only at run time.
    /// </summary>
    public static string? Problem(string taskName, IEnumerable<string> parameters)
    {
        if (!Tasks.TryGetValue(taskName, out var type))
            return $"No {typeof(TTask).Name} is named '{taskName}'.";
        try
        {
            foreach (var (name, _) in parameters.Where(p => p.Trim().Length > 0).Select(p => Split(taskName, p)))
                if (Settable(type, name) is null)
                    throw Unknown(type, taskName, name);
            return null;
        }
        catch (IntegrationException e)
        {
            return e.Message;
        }
    }

    private object Convert(string name, string value, Type type)
    {
        try
        {
            return type switch
            {
                _ when type == typeof(string) => value,
                _ when type == typeof(bool) => bool.Parse(value),
                _ when type == typeof(string[]) => value.Split(',', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries),
                _ when type.IsEnum => Enum.Parse(type, value, ignoreCase: true),
                _ => System.Convert.ChangeType(value, type, CultureInfo.InvariantCulture),
            };
        }
        catch (Exception e) when (e is FormatException or OverflowException or ArgumentException or InvalidCastException)
        {
            throw new IntegrationException(ErrorCodes.InvalidParameter, $"{TaskName}'s parameter {name} cannot be '{value}': {e.Message}");
        }
    }
}

/// <summary>The client of a transport: the one client target runs every transport's client task through it, with these shared parameters.</summary>
public sealed class RunTransferClient : NamedTransferTask<TransferClientTask>
{
    public string ClientProvider { get; set; } = "";
    public string ClientConnString { get; set; } = "";

    /// <summary>For the clients that read the server's database themselves (the in-process copies); the others have no such parameter.</summary>
    public string ServerProvider { get; set; } = "";
    public string ServerConnString { get; set; } = "";
    public string ServerWork { get; set; } = "";
    public string TotalBatches { get; set; } = "";
    public string BatchSize { get; set; } = "";
    public string TimeoutSeconds { get; set; } = "";
    public string ResultFile { get; set; } = "";
    public string Fault { get; set; } = "";
    public string MaxReconnects { get; set; } = "";
    public string Clients { get; set; } = "";
    public string StartAt { get; set; } = "";
    public string ClientMachine { get; set; } = "";
    public string Rate { get; set; } = "";
    public string MaxInFlight { get; set; } = "";
    public string PayloadBytes { get; set; } = "";
    public string PayloadKind { get; set; } = "";
    public string BatchBytes { get; set; } = "";

    /// <summary>The server the orchestrator started for this run, whose CPU the client reads over its timed transfer.</summary>
    public string ServerProcessId { get; set; } = "";

    /// <summary>The broker the build started for this run's transport, metered over the timed transfer.</summary>
    public string BrokerProcessId { get; set; } = "";
}

/// <summary>The server of a transport: the one server target runs every server task through it, with these shared parameters.</summary>
public sealed class RunTransferServer : NamedTransferTask<TransferServerTask>
{
    public string ServerProvider { get; set; } = "";
    public string ServerConnString { get; set; } = "";
    public string ServerWork { get; set; } = "";
    public string StopOnStdinClose { get; set; } = "";
    public string ExitOnInterrupt { get; set; } = "";
    public string StatsFile { get; set; } = "";

}
