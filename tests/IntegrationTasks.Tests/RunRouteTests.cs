namespace IntegrationTasks.Tests;

/// <summary>How a run is carried out: relayed or not, with which fault, and the endpoint its relayed client is given.</summary>
[TestClass]
[TestCategory("Unit")]
public sealed class RunRouteTests
{
    private static readonly TransportDefinition Tcp = new("TcpClient2") { ClientTarget = "TcpClient2", ServerTarget = "TcpServer2", ServerPort = 9100, PortProperty = "Port" };

    private static readonly TransportDefinition Rabbit = new("RabbitMQDurable")
    {
        ClientTarget = "RabbitMQDurable", ServerTarget = "RabbitMQDurableServer", PortProperty = "RabbitMQPort", HostProperty = "RabbitMQHostName",
        RelayTargetHost = "127.0.0.1", RelayTargetPort = "5673", Broker = "RabbitMQ",
    };

    private static RelaySettings Settings(bool useRelay, string fault, string pidFolder = "/nonexistent") =>
        new(useRelay, fault, "10.0.0.2", 8099, "/run/relay.sock", pidFolder);

    [TestMethod]
    public void Without_a_relay_a_run_is_its_client_and_its_record_and_no_fault()
    {
        var route = RunRoute.For(Tcp, Settings(useRelay: false, "Reset"));

        Assert.AreEqual((false, "None", "RunClient;_RecordRun", 0), (route.Relayed, route.Fault, string.Join(";", route.RunTargets), route.RelayedProperties.Count));
    }

    [TestMethod]
    public void A_relayed_client_is_given_the_relays_endpoint_and_the_relay_the_servers()
    {
        var route = RunRoute.For(Tcp, Settings(useRelay: true, "Reset"));

        Assert.AreEqual("_DefineTransport;_StartRelay;RunClient;_StopRelay;_RecordRun", string.Join(";", route.RunTargets));
        CollectionAssert.AreEqual(new[]
        {
            ("Fault", "Reset"), ("Relayed", "true"), ("HostName", "127.0.0.1"), ("Port", "8099"), ("RelayTargetHost", "10.0.0.2"), ("RelayTargetPort", "9100"),
        }, route.RelayedProperties.ToArray());
        Assert.AreEqual((true, false), (route.RelayCutsOnKill, route.RestartServerOnExit));
    }

    [TestMethod]
    public void A_relay_to_a_broker_forwards_where_the_transport_says_and_keeps_the_brokers_connection_on_a_kill()
    {
        var route = RunRoute.For(Rabbit, Settings(useRelay: true, "KillServer"));

        CollectionAssert.IsSubsetOf(new[] { ("RabbitMQHostName", "127.0.0.1"), ("RabbitMQPort", "8099"), ("RelayTargetHost", "127.0.0.1"), ("RelayTargetPort", "5673") },
            route.RelayedProperties.ToArray());
        Assert.AreEqual((false, true, "KillServer"), (route.RelayCutsOnKill, route.RestartServerOnExit, route.Fault));
    }

    [TestMethod]
    public void RestartBroker_runs_only_where_the_build_owns_the_transports_broker_here_or_on_the_server_machine()
    {
        var folder = Directory.CreateTempSubdirectory("route-").FullName;
        try
        {
            Assert.AreEqual("None", RunRoute.For(Rabbit, Settings(useRelay: true, "RestartBroker", folder)).Fault, "no pid file: not the build's broker");
            // Started by this build on the server machine: the mark its start there leaves here.
            File.WriteAllText(Path.Combine(folder, RunRoute.BrokerThereMark("RabbitMQ")), "");
            Assert.AreEqual("RestartBroker", RunRoute.For(Rabbit, Settings(useRelay: true, "RestartBroker", folder)).Fault);
            File.Delete(Path.Combine(folder, RunRoute.BrokerThereMark("RabbitMQ")));
            File.WriteAllText(Path.Combine(folder, "RabbitMQ.broker.pid"), "1");
            Assert.AreEqual(("RestartBroker", "None"),
                (RunRoute.For(Rabbit, Settings(useRelay: true, "RestartBroker", folder)).Fault, RunRoute.For(Tcp, Settings(useRelay: true, "RestartBroker", folder)).Fault));
        }
        finally
        {
            Directory.Delete(folder, recursive: true);
        }
    }

    [TestMethod]
    public void A_server_on_a_unix_socket_is_relayed_through_a_socket_of_the_relays()
    {
        var unix = Tcp with { RelayPathProperty = "SocketPath", RelayTargetPath = "/run/tcp2.sock" };

        CollectionAssert.IsSubsetOf(new[] { ("SocketPath", "/run/relay.sock"), ("RelayTargetPath", "/run/tcp2.sock") }, RunRoute.For(unix, Settings(true, "None")).RelayedProperties.ToArray());
    }

    [TestMethod]
    public void A_transport_without_a_port_property_is_never_relayed()
    {
        var files = new TransportDefinition("FileTransferRequest") { ClientTarget = "FileTransferRequest", ServerTarget = "FileTransferTestServer" };

        Assert.AreEqual((false, "None"), (RunRoute.For(files, Settings(true, "KillServer")).Relayed, RunRoute.For(files, Settings(true, "KillServer")).Fault));
    }
}
