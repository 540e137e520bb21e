using TaskItem = Microsoft.Build.Utilities.TaskItem;

namespace IntegrationTasks.Tests;

/// <summary>A transport's own parameters, bound by name to its task: a misspelt one is refused before any run, with the known names.</summary>
[TestClass]
[TestCategory("Unit")]
public sealed class TransferParametersTests
{
    /// <summary>MSBuild's own metadata of every item (-getItem lists them beside a definition's own).</summary>
    private static readonly HashSet<string> ReservedMetadata =
        ["Identity", "FullPath", "RootDir", "Filename", "Extension", "RelativeDir", "Directory", "RecursiveDir", "ModifiedTime", "CreatedTime", "AccessedTime"];

    private static TaskItem Definition(string name, params (string Name, string Value)[] metadata)
    {
        var item = new TaskItem(name);
        foreach (var (key, value) in metadata)
            item.SetMetadata(key, value);
        return item;
    }

    private static (bool Passed, FakeBuildEngine Engine) Check(TaskItem[] clients, TaskItem[] servers)
    {
        var engine = new FakeBuildEngine();
        var task = new CheckTransferParameters { BuildEngine = engine, Clients = clients, Servers = servers };
        return (task.Execute(), engine);
    }

    [TestMethod]
    public void Known_parameters_pass_and_a_misspelt_one_is_refused_with_the_names_its_task_takes()
    {
        TaskItem[] servers = [Definition("TcpServer2", ("Parameters", "Port=8081;MaxBatchRecords=100000;BindAddress=127.0.0.1"))];
        TaskItem[] clients =
        [
            Definition("TcpClient2", ("ClientParameters", "HostName=127.0.0.1;Port=8081")),
            // A definition with no task or parameters of its own may run a target of its own: not checked.
            Definition("Peer: SQLite ATTACH"),
        ];
        var (passed, engine) = Check(clients, servers);
        Assert.IsTrue(passed, engine.Log);

        (passed, engine) = Check([Definition("TcpClient2", ("ClientParameters", "HostName=127.0.0.1;Prot=8081"))], servers);
        Assert.IsFalse(passed);
        var error = engine.Errors.Single();
        Assert.AreEqual(ErrorCodes.InvalidParameter, error.Code);
        var message = error.Message ?? "";
        var known = message[(message.IndexOf("(known: ", StringComparison.Ordinal) + 8)..^2].Split(", ");
        CollectionAssert.IsSubsetOf(new[] { "BatchSize", "HostName", "Port", "TotalBatches" }, known);
        CollectionAssert.DoesNotContain(known, "Prot");

        foreach (var (client, server) in new[]
                 {
                     (Definition("TcpClient2"), Definition("TcpServer2", ("Parameters", "MaxBatchRecrods=5"))),
                     (Definition("TcpClient2", ("ClientTask", "TcpClient9")), servers[0]),
                     (Definition("TcpClient2", ("ClientParameters", "Port")), servers[0]),
                 })
        {
            (passed, engine) = Check([client], [server]);
            Assert.IsFalse(passed);
            Assert.IsTrue(engine.HasErrorCode(ErrorCodes.InvalidParameter), engine.Log);
        }
    }

    [TestMethod]
    public void Every_definition_declares_only_what_the_orchestration_reads_and_a_misspelt_name_is_refused()
    {
        // Every definition the families declare today passes (every RunAll checks them too): the vocabulary is the whole of what they use.
        static IEnumerable<string> Declared(IReadOnlyDictionary<string, string> item) =>
            item.Keys.Where(k => !ReservedMetadata.Contains(k) && !k.StartsWith("DefiningProject", StringComparison.Ordinal));
        foreach (var transport in Definitions.Transports)
            CollectionAssert.IsSubsetOf(Declared(transport).ToList(), DefinitionMetadata.Transport.ToList(), transport["Identity"]);
        foreach (var broker in Definitions.Brokers)
            CollectionAssert.IsSubsetOf(Declared(broker).ToList(), DefinitionMetadata.Broker.ToList(), broker["Identity"]);

        var engine = new FakeBuildEngine();
        var check = new CheckTransferParameters
        {
            BuildEngine = engine, Transports = [Definition("ZeroMqDealer", ("Family", "Queues"), ("PortPropery", "ZeroMqPort"))],
            Brokers = [Definition("NATS", ("Program", "/usr/sbin/nats-server"))],
        };
        Assert.IsFalse(check.Execute());
        Assert.AreEqual(ErrorCodes.InvalidParameter, engine.Errors.Single().Code);
        StringAssert.Contains(engine.Errors.Single().Message, "TransportDefinition ZeroMqDealer declares PortPropery");
        check = new CheckTransferParameters { BuildEngine = engine = new FakeBuildEngine(), Brokers = [Definition("NATS", ("Programme", "x"))] };
        Assert.IsFalse(check.Execute());
        Assert.IsTrue(engine.HasErrorCode(ErrorCodes.InvalidParameter), engine.Log);
    }
}
