namespace IntegrationTasks.Tests;

/// <summary>
/// What the families' targets files declare, read once from build.proj: each TransportDefinition and BrokerDefinition as its
/// metadata (Identity included). The fixtures learn the transports, their ports and their brokers from here, not from lists of
/// their own.
/// </summary>
internal static class Definitions
{
    private static readonly Lazy<(IReadOnlyList<IReadOnlyDictionary<string, string>> Transports, IReadOnlyList<IReadOnlyDictionary<string, string>> Brokers)> Items = new(() =>
    {
        var (exitCode, stdout, stderr) = RepositoryPaths.Run("dotnet",
            ["msbuild", RepositoryPaths.BuildProject, "-getItem:TransportDefinition", "-getItem:BrokerDefinition", "-nologo"]);
        Assert.AreEqual(0, exitCode, stderr);
        using var json = JsonDocument.Parse(stdout);
        var items = json.RootElement.GetProperty("Items");
        IReadOnlyList<IReadOnlyDictionary<string, string>> Read(string type) => [.. items.GetProperty(type).EnumerateArray()
            .Select(item => (IReadOnlyDictionary<string, string>)item.EnumerateObject().ToDictionary(p => p.Name, p => p.Value.GetString() ?? "", StringComparer.Ordinal))];
        return (Read("TransportDefinition"), Read("BrokerDefinition"));
    });

    public static IReadOnlyList<IReadOnlyDictionary<string, string>> Transports => Items.Value.Transports;
    public static IReadOnlyList<IReadOnlyDictionary<string, string>> Brokers => Items.Value.Brokers;
}
