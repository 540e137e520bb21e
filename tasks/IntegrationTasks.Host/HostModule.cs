using System.Reflection;

namespace IntegrationTasks.Host;

/// <summary>
/// An endpoint module of the one ASP.NET Core host process: a family's server (HTTP records, SOAP, gRPC)
/// or a lab's app. The host builds Kestrel once; each module chosen with --module adds its services and
/// maps its endpoints. A module lives in its family's folder of this project and names itself with
/// <see cref="HostModuleAttribute"/>: the host finds it there (<see cref="HostModules"/>), no list names it.
/// </summary>
internal interface IHostModule
{
    /// <summary>The name --module selects it by (its <see cref="HostModuleAttribute"/>).</summary>
    string Name => GetType().GetCustomAttribute<HostModuleAttribute>()!.Name;

    /// <summary>What it prints in the ready line.</summary>
    string Describe();

    /// <summary>Before the app is built: services, Kestrel options. Fails with an IntegrationException on bad arguments.</summary>
    Task ConfigureAsync(WebApplicationBuilder builder, CancellationToken cancellationToken);

    /// <summary>After: endpoints.</summary>
    void Map(WebApplication app);

    /// <summary>After the host's own logging: what the module's libraries write that it tells in its own words instead.</summary>
    void ConfigureLogging(ILoggingBuilder logging)
    {
    }

    /// <summary>
    /// The module's say on the host's endpoint (its protocols). Kestrel keeps one endpoint-defaults callback, so the host composes
    /// the modules' with its own here rather than each module setting it (the last one set would win).
    /// </summary>
    void ConfigureEndpoint(Microsoft.AspNetCore.Server.Kestrel.Core.ListenOptions endpoint)
    {
    }
}

/// <summary>Marks a class as the host module --module <paramref name="name"/> selects; it takes the host's arguments in its constructor.</summary>
[AttributeUsage(AttributeTargets.Class, Inherited = false)]
internal sealed class HostModuleAttribute(string name) : Attribute
{
    public string Name { get; } = name;
}

/// <summary>The modules this assembly holds, found by their attribute.</summary>
internal static class HostModules
{
    public static IReadOnlyDictionary<string, Type> All { get; } = typeof(HostModules).Assembly.GetTypes()
        .Where(t => typeof(IHostModule).IsAssignableFrom(t) && t.GetCustomAttribute<HostModuleAttribute>() is not null)
        .ToDictionary(t => t.GetCustomAttribute<HostModuleAttribute>()!.Name, StringComparer.Ordinal);

    public static IHostModule Create(string name, HostArguments arguments) =>
        All.TryGetValue(name, out var type)
            ? (IHostModule)Activator.CreateInstance(type, arguments)!
            : throw new ArgumentException($"Unknown module '{name}' (known: {Known}).");

    public static string Known => string.Join(", ", All.Keys.Order(StringComparer.Ordinal));
}
