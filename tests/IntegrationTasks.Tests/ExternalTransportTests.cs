using System.Text.RegularExpressions;

namespace IntegrationTasks.Tests;

/// <summary>A transport this assembly declares, found by the loader as one of another repository would be.</summary>
public sealed class LoadingProbeTransport : Transport
{
    public override string Name => "LoadingProbe";
    public override TransportCapabilities Capabilities => TransportCapabilities.ManyClients;
    public override IReadOnlyCollection<string> SettingNames => ["Lines"];
    public override TransportClient CreateClient() => throw new NotSupportedException();
    public override TransportServer CreateServer() => throw new NotSupportedException();
}

/// <summary>How an external transport's assembly is loaded and checked, and what the seam's assembly makes public.</summary>
[TestClass]
[TestCategory("Unit")]
public sealed class ExternalTransportTests
{
    private static string ThisAssembly => typeof(LoadingProbeTransport).Assembly.Location;

    [TestMethod]
    public void A_transport_is_found_by_name_in_a_context_of_its_own_that_shares_the_seam()
    {
        var transport = ExternalTransports.Find(ThisAssembly, "LoadingProbe");

        Assert.AreEqual(("LoadingProbe", TransportCapabilities.ManyClients), (transport.Name, transport.Capabilities));
        Assert.AreNotSame(typeof(LoadingProbeTransport).Assembly, transport.GetType().Assembly, "loaded from its bytes, not the running copy");
        Assert.AreSame(typeof(Transport).Assembly, transport.GetType().BaseType!.Assembly, "one seam for the suite and the transport");
        Assert.AreSame(transport, ExternalTransports.Find(ThisAssembly, "LoadingProbe"), "loaded once while the file is unchanged");
    }

    [TestMethod]
    public void A_name_the_assembly_does_not_declare_is_IT1001_naming_what_it_does()
    {
        var e = Assert.ThrowsExactly<IntegrationException>(() => ExternalTransports.Find(ThisAssembly, "Nope"));

        Assert.AreEqual(ErrorCodes.InvalidParameter, e.Code);
        StringAssert.Contains(e.Message, "LoadingProbe");
    }

    [TestMethod]
    public void A_missing_assembly_is_IT1001()
    {
        var e = Assert.ThrowsExactly<IntegrationException>(() => ExternalTransports.Find("/nonexistent/MyTransport.dll", "MyTransport"));

        Assert.AreEqual(ErrorCodes.InvalidParameter, e.Code);
    }

    [TestMethod]
    [DataRow("Lines=3", 9300, null)]
    [DataRow("Lines=3,Colour=red", 9300, "IT1001")]
    [DataRow("Lines", 9300, "IT1001")]
    [DataRow("", 0, "IT1001")]
    public void Settings_and_port_are_checked_against_what_the_transport_declares(string settings, int port, string? code)
    {
        var reference = new ExternalTransportReference(ThisAssembly, "LoadingProbe", settings);

        if (code is null)
            Assert.AreEqual("3", reference.Resolve(port).Settings["Lines"]);
        else
            Assert.AreEqual(code, Assert.ThrowsExactly<IntegrationException>(() => reference.Resolve(port)).Code);
    }

    [TestMethod]
    public void The_seam_makes_public_exactly_the_types_its_public_API_file_lists()
    {
        var listed = File.ReadAllLines(Path.Combine(RepositoryPaths.Root, "tasks/IntegrationTasks.Abstractions/PublicAPI.Shipped.txt"))
            .Concat(File.ReadAllLines(Path.Combine(RepositoryPaths.Root, "tasks/IntegrationTasks.Abstractions/PublicAPI.Unshipped.txt")))
            .Where(line => Regex.IsMatch(line, @"^[A-Za-z_][\w.]*$")).ToHashSet(StringComparer.Ordinal);
        var exported = typeof(Transport).Assembly.GetExportedTypes().Select(t => t.FullName!.Replace('+', '.')).ToHashSet(StringComparer.Ordinal);

        CollectionAssert.AreEquivalent(listed.Order().ToArray(), exported.Order().ToArray());
        CollectionAssert.IsSubsetOf(new[]
        {
            "IntegrationTasks.Abstractions.Transport", "IntegrationTasks.Abstractions.TransportClient", "IntegrationTasks.Abstractions.ClientSession",
            "IntegrationTasks.Abstractions.TransportServer", "IntegrationTasks.Abstractions.ServerSession", "IntegrationTasks.Abstractions.IServiceTableReader",
            "IntegrationTasks.Abstractions.ServiceRecord", "IntegrationTasks.Abstractions.RecordFrames", "IntegrationTasks.Abstractions.TransportException",
        }, exported.ToArray());
    }
}
