namespace IntegrationTasks.Host;

/// <summary>
/// An endpoint module of the one ASP.NET Core host process: a family's server (HTTP records; SOAP and
/// gRPC next) or a lab's app. The host builds Kestrel once; each module chosen with --module adds its
/// services and maps its endpoints. A module lives in its family's folder of this project.
/// </summary>
internal interface IHostModule
{
    /// <summary>The name --module selects it by.</summary>
    string Name { get; }

    /// <summary>What it prints in the ready line.</summary>
    string Describe();

    /// <summary>Before the app is built: services, Kestrel options. Fails with an IntegrationException on bad arguments.</summary>
    Task ConfigureAsync(WebApplicationBuilder builder, CancellationToken cancellationToken);

    /// <summary>After: endpoints.</summary>
    void Map(WebApplication app);

    /// <summary>
    /// The module's say on the host's endpoint (its protocols). Kestrel keeps one endpoint-defaults callback, so the host composes
    /// the modules' with its own here rather than each module setting it (the last one set would win).
    /// </summary>
    void ConfigureEndpoint(Microsoft.AspNetCore.Server.Kestrel.Core.ListenOptions endpoint)
    {
    }
}
