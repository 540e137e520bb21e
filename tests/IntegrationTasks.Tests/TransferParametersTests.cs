using System.Reflection;
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

    /// <summary>What the compiler should have found: every public transfer task class and each text property it can be given.</summary>
    private static Dictionary<string, string[]> DeclaredByReflection<TTask>()
    {
        static bool Text(Type type) => type == typeof(string) || type == typeof(bool) || type == typeof(int) || type == typeof(long)
                                       || type == typeof(double) || type == typeof(string[]) || type.IsEnum;
        return typeof(TTask).Assembly.GetTypes().Where(t => typeof(TTask).IsAssignableFrom(t) && t is { IsAbstract: false, IsPublic: true })
            .ToDictionary(t => t.Name, t => t.GetProperties(BindingFlags.Public | BindingFlags.Instance)
                .Where(p => p.SetMethod is { IsPublic: true } && p.DeclaringType != typeof(Microsoft.Build.Utilities.Task) && Text(p.PropertyType))
                .Select(p => p.Name + (p.GetCustomAttribute<Microsoft.Build.Framework.RequiredAttribute>() is null ? "" : " (required)")).Order(StringComparer.Ordinal).ToArray());
    }

    private static string[] Parameters<TTask>(TransferTaskBinding<TTask> task) =>
        task.Parameters.Values.Select(p => p.Name + (p.Required ? " (required)" : "")).Order(StringComparer.Ordinal).ToArray();

    [TestMethod]
    public void The_compiled_catalog_holds_every_transfer_task_and_each_parameter_it_declares()
    {
        foreach (var (catalog, declared) in new[]
                 {
                     (TransferTasks.Clients.Names.ToDictionary(n => n, n => Parameters(TransferTasks.Clients.Named(n))),
                         DeclaredByReflection<TransferClientTask>()),
                     (TransferTasks.Servers.Names.ToDictionary(n => n, n => Parameters(TransferTasks.Servers.Named(n))),
                         DeclaredByReflection<TransferServerTask>()),
                 })
        {
            CollectionAssert.AreEquivalent(declared.Keys.ToList(), catalog.Keys.ToList());
            foreach (var (task, parameters) in declared)
                CollectionAssert.AreEqual(parameters, catalog[task], task);
        }
        Assert.IsTrue(TransferTasks.Clients.Named("TcpClient2").Parameters["TotalBatches"].Required);
        Assert.IsFalse(TransferTasks.Clients.Named("TcpClient2").Parameters["Connector"].Required);
    }

    [TestMethod]
    public void Each_parameter_is_set_as_its_type_and_a_value_that_is_not_one_is_refused()
    {
        var client = new RunTransferClient
        {
            BuildEngine = new FakeBuildEngine(), TaskName = "TcpClient2", ClientConnString = "Data Source=c.db", TotalBatches = "7", BatchSize = "1000",
            Rate = "12.5", PayloadKind = "Text", Parameters = ["HostName=10.0.0.2", "Port=8090", "Connector=Unix", "SocketPath=a=b"],
            ServerProvider = "Sqlite", // shared, and not a parameter of TcpClient2: left out
        };
        var task = (Tcp.TcpClient2)client.Create();
        Assert.AreEqual(("10.0.0.2", 8090, "Unix", "a=b"), (task.HostName, task.Port, task.Connector, task.SocketPath));
        Assert.AreEqual((7, 1000, 12.5, "Text"), (task.TotalBatches, task.BatchSize, task.Rate, task.PayloadKind));

        foreach (var (batches, parameter) in new[] { ("7", "Port=eighty"), ("", "Port=8090"), ("7", "Port"), ("7", "Prot=8090") })
        {
            client = new RunTransferClient
            {
                BuildEngine = new FakeBuildEngine(), TaskName = "TcpClient2", ClientConnString = "Data Source=c.db", TotalBatches = batches,
                BatchSize = "10", Parameters = [parameter],
            };
            var error = Assert.ThrowsExactly<IntegrationException>(() => client.Create(), parameter);
            Assert.AreEqual(ErrorCodes.InvalidParameter, error.Code, parameter);
        }
        var engine = new FakeBuildEngine();
        Assert.IsFalse(new RunTransferServer { BuildEngine = engine, TaskName = "TcpServer9" }.Execute());
        Assert.AreEqual(ErrorCodes.InvalidParameter, engine.Errors.Single().Code);
    }

    [TestMethod]
    public void Every_definition_declares_only_what_the_orchestration_reads_and_a_misspelt_name_is_refused()
    {
        // Every definition the families declare today passes (every RunAll checks them too): the vocabulary is the whole of what they use.
        static IEnumerable<string> Declared(IReadOnlyDictionary<string, string> item) =>
            item.Keys.Where(k => !ReservedMetadata.Contains(k) && !k.StartsWith("DefiningProject", StringComparison.Ordinal));
        foreach (var transport in Definitions.Transports)
        {
            CollectionAssert.IsSubsetOf(Declared(transport).ToList(), TransportDefinition.Vocabulary.ToList(), transport["Identity"]);
            var typed = TransportDefinition.From(Definition(transport["Identity"], Declared(transport).Select(k => (k, transport[k])).ToArray()));
            Assert.AreEqual(transport.GetValueOrDefault("MaxRecords", "") is { Length: > 0 } cap ? int.Parse(cap) : null, typed.MaxRecords, typed.Name);
            Assert.AreEqual(transport.GetValueOrDefault("OneClient") == "true", typed.OneClient, typed.Name);
            Assert.IsTrue(typed.Family.Length > 0 && typed.ClientTarget.Length > 0, typed.Name);
        }
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

        // A value not of its name's type is refused before any run too, naming both.
        foreach (var (name, value) in new[] { ("PriorMicrosecondsPerRecord", "fast"), ("MaxRecords", "-5"), ("OneClient", "yes"), ("ServerPort", "80a") })
        {
            check = new CheckTransferParameters { BuildEngine = engine = new FakeBuildEngine(), Transports = [Definition("ZeroMqDealer", (name, value))] };
            Assert.IsFalse(check.Execute(), name);
            Assert.AreEqual(ErrorCodes.InvalidParameter, engine.Errors.Single().Code, name);
            StringAssert.Contains(engine.Errors.Single().Message, $"ZeroMqDealer's {name} cannot be '{value}'");
        }
    }
}
