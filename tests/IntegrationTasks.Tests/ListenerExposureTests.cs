using IntegrationTasks.Queues.ZeroMq;

namespace IntegrationTasks.Tests;

/// <summary>Servers whose protocol has no credential of its own refuse to listen beyond loopback without one, before they bind.</summary>
[TestClass]
[TestCategory("Unit")]
public sealed class ListenerExposureTests
{
    private static (bool Started, string? Code) Start(TransferServerTask server)
    {
        using var databases = new DisposableSqlite();
        var engine = new FakeBuildEngine();
        server.BuildEngine = engine;
        server.ServerConnString = databases.Value.Server.ConnectionString;
        return server.Execute() ? (true, null) : (false, engine.Errors.FirstOrDefault()?.Code);
    }

    [TestMethod]
    [DataRow("0.0.0.0", false, false)]
    [DataRow("10.99.0.1", true, false)]
    [DataRow("::", false, true)]
    public void The_TCP_generations_and_net_tcp_need_TLS_with_client_certificates_beyond_loopback(string bindAddress, bool tls, bool clientCertificates)
    {
        using var tlsFolder = new TempDirectory("it-exposure-");
        Assert.AreEqual((false, ErrorCodes.InvalidParameter),
            Start(new TcpServer2 { BindAddress = bindAddress, Port = TestPorts.Free(), Tls = tls, ClientCertificates = clientCertificates, TlsFolder = tlsFolder }));
        Assert.AreEqual((false, ErrorCodes.InvalidParameter),
            Start(new NetTcpServer { BindAddress = bindAddress, Port = TestPorts.Free(), Tls = tls, ClientCertificates = clientCertificates, TlsFolder = tlsFolder }));
    }

    [TestMethod]
    [DataRow("tcp://0.0.0.0:{0}")]
    [DataRow("tcp://*:{0}")]
    [DataRow("tcp://10.99.0.1:{0}")]
    public void ZeroMQ_does_not_listen_beyond_loopback(string endpoint) =>
        Assert.AreEqual((false, ErrorCodes.InvalidParameter), Start(new ZeroMqServer { Endpoint = string.Format(System.Globalization.CultureInfo.InvariantCulture, endpoint, TestPorts.Free()) }));

    [TestMethod]
    public void A_server_on_loopback_or_a_unix_socket_needs_no_credential()
    {
        using var folder = new TempDirectory("it-exposure-");
        var server = new TcpServer2 { Connector = "Unix", SocketPath = Path.Combine(folder, "tcp2.sock"), BindAddress = "0.0.0.0" };
        // Started, it serves until cancelled: cancel it shortly after, a clean stop.
        _ = Task.Delay(1500).ContinueWith(_ => server.Cancel(), TaskScheduler.Default);
        Assert.AreEqual((true, (string?)null), Start(server));
    }
}
