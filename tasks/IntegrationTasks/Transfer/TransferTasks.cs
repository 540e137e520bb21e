using System.Globalization;

namespace IntegrationTasks.Transfer;

/// <summary>A parameter of a transfer task: its name, whether the task needs it, and how its text is set (written by the compiler).</summary>
public sealed record TransferParameter<TTask>(string Name, bool Required, Action<TTask, string> Set);

/// <summary>A transfer task as the seam knows it: its class name, how one is made, and its parameters.</summary>
public sealed class TransferTaskBinding<TTask>(string name, Func<TTask> create, IReadOnlyList<TransferParameter<TTask>> parameters)
{
    public string Name { get; } = name;

    public Func<TTask> Create { get; } = create;

    public IReadOnlyDictionary<string, TransferParameter<TTask>> Parameters { get; } =
        parameters.ToDictionary(p => p.Name, StringComparer.Ordinal);

    /// <summary>The parameter named so, or IT1001 naming the known ones.</summary>
    public TransferParameter<TTask> Parameter(string parameterName) =>
        Parameters.TryGetValue(parameterName, out var parameter)
            ? parameter
            : throw new IntegrationException(ErrorCodes.InvalidParameter,
                $"{Name} has no parameter {parameterName} (known: {string.Join(", ", Parameters.Keys.Order(StringComparer.Ordinal))}).");
}

/// <summary>The transfer tasks of one kind (clients or servers), by class name.</summary>
public sealed class TransferTaskCatalog<TTask>(IEnumerable<TransferTaskBinding<TTask>> bindings)
{
    private readonly IReadOnlyDictionary<string, TransferTaskBinding<TTask>> _byName = bindings.ToDictionary(b => b.Name, StringComparer.Ordinal);

    public IEnumerable<string> Names => _byName.Keys.Order(StringComparer.Ordinal);

    /// <summary>The task named so, or IT1001 naming the known ones.</summary>
    public TransferTaskBinding<TTask> Named(string taskName) =>
        _byName.TryGetValue(taskName, out var binding)
            ? binding
            : throw new IntegrationException(ErrorCodes.InvalidParameter,
                $"No {typeof(TTask).Name} is named '{taskName}' (known: {string.Join(", ", Names)}).");

    /// <summary>
    /// The problem with a transport's own parameters, before any run: a task name that names no task, a parameter that is not
    /// Name=Value or that its task does not take (the known names listed); null when there is none. Values are not converted here:
    /// they may come from properties set only at run time.
    /// </summary>
    public string? Problem(string taskName, IEnumerable<string> parameters)
    {
        try
        {
            var binding = Named(taskName);
            foreach (var parameter in parameters.Where(p => p.Trim().Length > 0))
                binding.Parameter(ParameterText.Split(taskName, parameter).Name);
            return null;
        }
        catch (IntegrationException e)
        {
            return e.Message;
        }
    }
}

/// <summary>
/// Every client and server task of the transports, as the compiler found them (TransferTaskBinderGenerator): a task class added to a
/// family is known here without being listed.
/// </summary>
public static partial class TransferTasks
{
    public static TransferTaskCatalog<TransferClientTask> Clients { get; } = new(ClientBindings());

    public static TransferTaskCatalog<TransferServerTask> Servers { get; } = new(ServerBindings());

    private static partial IEnumerable<TransferTaskBinding<TransferClientTask>> ClientBindings();

    private static partial IEnumerable<TransferTaskBinding<TransferServerTask>> ServerBindings();
}

/// <summary>A parameter's text read as MSBuild reads a task attribute's: invariant numbers, true/false, a comma list, an enum's name.</summary>
public static class ParameterText
{
    public static bool Boolean(string text) => bool.Parse(text);

    public static int Int32(string text) => int.Parse(text, NumberStyles.Integer, CultureInfo.InvariantCulture);

    public static long Int64(string text) => long.Parse(text, NumberStyles.Integer, CultureInfo.InvariantCulture);

    public static double Double(string text) => double.Parse(text, NumberStyles.Float | NumberStyles.AllowThousands, CultureInfo.InvariantCulture);

    public static string[] List(string text) => text.Split(',', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries);

    public static TEnum Enum<TEnum>(string text) where TEnum : struct, System.Enum => System.Enum.Parse<TEnum>(text, ignoreCase: true);

    /// <summary>"Name=Value" split at its first '=' (the value may hold more), or IT1001.</summary>
    public static (string Name, string Value) Split(string taskName, string parameter) =>
        parameter.IndexOf('=', StringComparison.Ordinal) is var at and > 0
            ? (parameter[..at].Trim(), parameter[(at + 1)..].Trim())
            : throw new IntegrationException(ErrorCodes.InvalidParameter, $"{taskName}'s parameter '{parameter}' is not Name=Value.");
}
