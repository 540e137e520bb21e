using System.Net.Security;
using System.Security.Cryptography.X509Certificates;

namespace IntegrationTasks.Tests;

/// <summary>
/// The transports over TLS (the TCP generations, REST, gRPC): every row moved with the server's certificate checked against the
/// suite's private authority, and every way a handshake can go wrong refused with IT3009 on the client and, where the server sees
/// it, one coded line on the server, which goes on serving.
/// </summary>
[TestClass]
[TestCategory("EndToEnd")]
public sealed class TlsTransferTests
{
    private const int Records = 2000;

    /// <summary>A TCP client of the TLS tests: over TLS trusting <paramref name="tlsFolder"/>'s authority (plaintext when null).</summary>
    internal static TcpClientTask Client(TestDatabases databases, int port, FakeBuildEngine engine, string? tlsFolder, string generation = "TcpClient2",
        bool clientCertificate = false, int? maxReconnects = null)
    {
        var client = TcpGeneration.All[generation].NewClient();
        client.HostName = "127.0.0.1";
        client.Port = port;
        client.MaxInFlight = 3;
        client.Tls = tlsFolder is not null;
        client.TlsFolder = tlsFolder ?? "";
        client.ClientCertificates = clientCertificate;
        if (maxReconnects is { } reconnects)
            client.MaxReconnects = reconnects;
        return client.For(databases, engine, totalBatches: 8, batchSize: 250, timeoutSeconds: 30);
    }

    public static IEnumerable<object[]> Generations => TcpGeneration.All.Keys.Select(name => new object[] { name });

    [TestMethod]
    [DynamicData(nameof(Generations))]
    public async Task Every_generation_moves_every_row_over_TLS(string generation)
    {
        using var folder = new TempDirectory("it-tls-");
        var certificates = TlsCertificates.Ensure(folder);
        await using var databases = await TransferChecks.WithRecordsAsync("Sqlite", Records);
        await using var server = new RunningTcpServer(databases.Server, TcpGeneration.All[generation], tls: certificates.ServerOptions());
        var engine = new FakeBuildEngine();
        await Client(databases, server.Port, engine, folder, generation).AssertMovesEveryRowAsync(engine, databases, Records);
        Assert.IsEmpty(server.Log.Lines.Where(l => l.StartsWith("warning", StringComparison.Ordinal)), string.Join("\n", server.Log.Lines));
    }

    [TestMethod]
    [DataRow("another authority")]
    [DataRow("a name the certificate does not hold")]
    [DataRow("an expired certificate")]
    [DataRow("a plaintext client")]
    public async Task A_handshake_that_cannot_succeed_is_IT3009_on_both_sides_and_a_good_client_is_still_served(string wrong)
    {
        using var folder = new TempDirectory("it-tls-");
        using var other = new TempDirectory("it-tls-other-");
        var certificates = wrong switch
        {
            "a name the certificate does not hold" => TlsCertificates.MakeNew(folder, ["other.example"]),
            "an expired certificate" => TlsCertificates.MakeNew(folder, notBefore: DateTimeOffset.UtcNow.AddDays(-10), validity: TimeSpan.FromDays(2)),
            _ => TlsCertificates.Ensure(folder),
        };
        TlsCertificates.MakeNew(other);
        await using var databases = await TransferChecks.WithRecordsAsync("Sqlite", Records);
        await using var server = new RunningTcpServer(databases.Server, tls: certificates.ServerOptions(), connectionTimeout: TimeSpan.FromSeconds(5));

        var engine = new FakeBuildEngine();
        var client = Client(databases, server.Port, engine, wrong switch
        {
            "another authority" => other.Path,
            "a plaintext client" => null,
            _ => folder.Path,
        });
        Assert.IsFalse(await Task.Run(client.Execute), engine.Log);
        if (wrong == "a plaintext client")
            Assert.IsTrue(engine.HasErrorCode(ErrorCodes.ConnectionLost) || engine.HasErrorCode(ErrorCodes.TransferFailed) || engine.HasErrorCode(ErrorCodes.TruncatedFrame),
                engine.Log);
        else
            Assert.IsTrue(engine.HasErrorCode(ErrorCodes.TlsRefused), engine.Log);
        Assert.IsFalse(engine.HasErrorCode(ErrorCodes.Unexpected), engine.Log);
        await Eventually.WaitUntilAsync(() => server.Log.Lines.Any(l => l.StartsWith($"warning {ErrorCodes.TlsRefused}: ", StringComparison.Ordinal) && l.Contains("from 127.0.0.1:", StringComparison.Ordinal)),
            "the server's coded line", TimeSpan.FromSeconds(15), () => string.Join("\n", server.Log.Lines));

        if (wrong is "a name the certificate does not hold" or "an expired certificate")
            return; // no client could be served by this server: its certificate is what is wrong
        await databases.Client.EmptyAsync(RecordTable.Client, CancellationToken.None);
        engine = new FakeBuildEngine();
        await Client(databases, server.Port, engine, folder).AssertMovesEveryRowAsync(engine, databases, Records);
    }

    [TestMethod]
    public async Task Connections_stalled_in_their_handshake_hold_no_clients_slot_and_go_at_the_handshake_deadline()
    {
        using var folder = new TempDirectory("it-tls-");
        var certificates = TlsCertificates.Ensure(folder);
        await using var databases = await TransferChecks.WithRecordsAsync("Sqlite", Records);
        await using var server = new RunningTcpServer(databases.Server, tls: certificates.ServerOptions(), maxConnections: 100);
        var stalled = new List<System.Net.Sockets.TcpClient>();
        try
        {
            // Twice as many connections as the server serves, each the first bytes of a ClientHello and then nothing.
            for (var i = 0; i < 200; i++)
            {
                var connection = new System.Net.Sockets.TcpClient();
                stalled.Add(connection);
                await connection.ConnectAsync(System.Net.IPAddress.Loopback, server.Port);
                await connection.GetStream().WriteAsync(new byte[] { 0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00 });
            }
            var engine = new FakeBuildEngine();
            await Client(databases, server.Port, engine, folder).AssertMovesEveryRowAsync(engine, databases, Records);
            Assert.IsEmpty(server.Log.Lines.Where(l => l.Contains(ErrorCodes.ServerBusy, StringComparison.Ordinal)), string.Join("\n", server.Log.Lines));
            // Each is dropped at the handshake's deadline, in a coded line.
            await Eventually.WaitUntilAsync(() => server.Log.Lines.Count(l => l.Contains(ErrorCodes.TlsRefused, StringComparison.Ordinal)) >= 200,
                "every stalled handshake dropped", TimeSpan.FromSeconds(60), () => string.Join("\n", server.Log.Lines.TakeLast(5)));
        }
        finally
        {
            foreach (var connection in stalled)
                connection.Dispose();
        }
    }

    [TestMethod]
    public async Task A_client_offering_only_TLS_1_1_is_refused_by_the_server_with_one_coded_line_and_a_good_client_is_still_served()
    {
        using var folder = new TempDirectory("it-tls-");
        var certificates = TlsCertificates.Ensure(folder);
        await using var databases = await TransferChecks.WithRecordsAsync("Sqlite", Records);
        await using var server = new RunningTcpServer(databases.Server, tls: certificates.ServerOptions(), connectionTimeout: TimeSpan.FromSeconds(5));
        // A client no one here wrote, offering TLS 1.1 alone (the server takes 1.2 and 1.3 only).
        using (var old = new System.Net.Sockets.TcpClient())
        {
            await old.ConnectAsync("127.0.0.1", server.Port);
            await using var tls = new SslStream(old.GetStream());
#pragma warning disable SYSLIB0039 // the obsolete protocol is the point
            var options = certificates.ClientOptions("localhost");
            options.EnabledSslProtocols = System.Security.Authentication.SslProtocols.Tls11;
#pragma warning restore SYSLIB0039
            await Assert.ThrowsAsync<Exception>(() => tls.AuthenticateAsClientAsync(options));
        }
        await Eventually.WaitUntilAsync(() => server.Log.Lines.Any(l => l.StartsWith($"warning {ErrorCodes.TlsRefused}: ", StringComparison.Ordinal)),
            "the server's coded line", TimeSpan.FromSeconds(15), () => string.Join("\n", server.Log.Lines));
        Assert.IsFalse(server.Log.Lines.Any(l => l.Contains(ErrorCodes.Unexpected, StringComparison.Ordinal)), string.Join("\n", server.Log.Lines));
        var engine = new FakeBuildEngine();
        await Client(databases, server.Port, engine, folder).AssertMovesEveryRowAsync(engine, databases, Records);
    }

    [TestMethod]
    public async Task A_connection_reset_mid_transfer_over_TLS_is_resumed_and_every_row_arrives_once()
    {
        using var folder = new TempDirectory("it-tls-");
        var certificates = TlsCertificates.Ensure(folder);
        await using var databases = await TransferChecks.WithRecordsAsync("Sqlite", Records);
        await using var server = new RunningTcpServer(databases.Server, tls: certificates.ServerOptions());
        // The relay passes TLS through untouched and resets the connection mid-transfer: a break, not a refusal.
        var (relay, relayPort, running) = await RelayFaults.ResettingAsync(server.Port, afterBytes: 200_000);
        await using (relay)
        {
            var engine = new FakeBuildEngine();
            var client = Client(databases, relayPort, engine, folder);
            await client.AssertMovesEveryRowAsync(engine, databases, Records);
            Assert.IsTrue(relay.FaultInjected, "the relay reset the connection");
            Assert.AreEqual(1, client.Reconnects, engine.Log);
        }
        await running;
    }

    [TestMethod]
    public async Task A_TLS_client_at_a_plaintext_server_fails_coded_and_the_server_says_the_frame_was_not_one()
    {
        using var folder = new TempDirectory("it-tls-");
        TlsCertificates.Ensure(folder);
        await using var databases = await TransferChecks.WithRecordsAsync("Sqlite", Records);
        await using var server = new RunningTcpServer(databases.Server, connectionTimeout: TimeSpan.FromSeconds(5));
        var engine = new FakeBuildEngine();
        Assert.IsFalse(await Task.Run(Client(databases, server.Port, engine, folder).Execute), engine.Log);
        // The server closes on the ClientHello: to the client, a connection that ended during its handshake (as a server going down).
        Assert.IsTrue(engine.HasErrorCode(ErrorCodes.ConnectionFailed), engine.Log);
        Assert.IsFalse(engine.HasErrorCode(ErrorCodes.Unexpected), engine.Log);
        // The ClientHello read as a frame header: a length no frame may have, or no complete request in time — coded either way.
        await Eventually.WaitUntilAsync(() => server.Log.Lines.Any(l => l.StartsWith("warning IT", StringComparison.Ordinal)),
            "the server's coded line", TimeSpan.FromSeconds(15), () => string.Join("\n", server.Log.Lines));
    }

    [TestMethod]
    [DataRow("Http1")]
    [DataRow("Http2")]
    public Task RestJson_moves_every_row_over_HTTPS_and_refuses_another_authority_with_IT3009(string httpVersion) =>
        AssertHostTransportOverTlsAsync(new RestServer { HttpVersion = httpVersion }, RestProtocol.Path,
            (server, databases, tlsFolder, engine) => new RestJson { Uri = server.Url, HttpVersion = httpVersion, MaxInFlight = 3, Tls = true, TlsFolder = tlsFolder }
                .For(databases, engine, 8, 250, timeoutSeconds: 30),
            async (server, databases) =>
            {
                // A plaintext client at the HTTPS port: a coded error on its side, the failed handshake one coded line on the server's.
                var plaintext = new FakeBuildEngine();
                var plain = new RestJson { Uri = server.Url.Replace("https://", "http://", StringComparison.Ordinal), HttpVersion = httpVersion, MaxInFlight = 1 }
                    .For(databases, plaintext, 8, 250, timeoutSeconds: 30);
                Assert.IsFalse(await Task.Run(plain.Execute), plaintext.Log);
                Assert.IsFalse(plaintext.HasErrorCode(ErrorCodes.Unexpected), plaintext.Log);
                await Eventually.WaitUntilAsync(() => server.Log.Contains($"{ErrorCodes.TlsRefused}: ", StringComparison.Ordinal), "the server's coded line",
                    TimeSpan.FromSeconds(15), () => server.Log);
            });

    [TestMethod]
    [DataRow(false)]
    [DataRow(true)]
    public Task Both_gRPC_transports_move_every_row_over_TLS_and_refuse_another_authority_with_IT3009(bool streaming) =>
        AssertHostTransportOverTlsAsync(new IntegrationTasks.Grpc.GrpcServer { Connections = 2, Answerers = 2 }, "", (server, databases, tlsFolder, engine) =>
        {
            IntegrationTasks.Grpc.GrpcClientTask client = streaming ? new IntegrationTasks.Grpc.GrpcStreaming() : new IntegrationTasks.Grpc.GrpcClient();
            client.Address = server.Url;
            client.MaxInFlight = 3;
            client.Tls = true;
            client.TlsFolder = tlsFolder;
            return client.For(databases, engine, 8, 250, timeoutSeconds: 30);
        });

    [TestMethod]
    public Task WebSocketClient_moves_every_row_over_wss_and_refuses_another_authority_with_IT3009() =>
        AssertHostTransportOverTlsAsync(new IntegrationTasks.WebSockets.WebSocketServer(), IntegrationTasks.WebSockets.WebSocketProtocol.Path,
            (server, databases, tlsFolder, engine) => new IntegrationTasks.WebSockets.WebSocketClient
                {
                    Uri = server.Url.Replace("https://", "wss://", StringComparison.Ordinal), Tls = true, TlsFolder = tlsFolder, MaxInFlight = 3,
                }.For(databases, engine, 8, 250, timeoutSeconds: 30),
            async (server, databases) =>
            {
                // A ws:// client at the wss:// port: coded on its side, one coded line on the server's.
                var plaintext = new FakeBuildEngine();
                var plain = new IntegrationTasks.WebSockets.WebSocketClient { Uri = server.Url.Replace("https://", "ws://", StringComparison.Ordinal), MaxInFlight = 1 }
                    .For(databases, plaintext, 8, 250, timeoutSeconds: 30);
                Assert.IsFalse(await Task.Run(plain.Execute), plaintext.Log);
                CollectionAssert.AreEqual(new[] { ErrorCodes.TlsRefused }, plaintext.Errors.Select(e => e.Code).ToArray(), plaintext.Log);
                await Eventually.WaitUntilAsync(() => server.Log.Contains($"{ErrorCodes.TlsRefused}: ", StringComparison.Ordinal), "the server's coded line",
                    TimeSpan.FromSeconds(15), () => server.Log);
            });

    [TestMethod]
    [DataRow("SoapSmallBatchesAsync")]
    [DataRow("SoapSmallRequests")]
    public Task SOAP_moves_every_row_over_HTTPS_and_refuses_another_authority_with_IT3009(string transport) =>
        AssertHostTransportOverTlsAsync(new IntegrationTasks.Wcf.SoapServer { Connections = 2, Answerers = 2 }, IntegrationTasks.Wcf.ServiceNames.SoapPath,
            (server, databases, tlsFolder, engine) =>
            {
                var client = (IntegrationTasks.Wcf.WcfClientTask)Activator.CreateInstance(typeof(IntegrationTasks.Wcf.WcfClientTask).Assembly.GetType($"IntegrationTasks.Wcf.{transport}", throwOnError: true)!)!;
                client.Address = server.Url;
                client.MaxInFlight = 3;
                client.Tls = true;
                client.TlsFolder = tlsFolder;
                return client.For(databases, engine, 8, 250, timeoutSeconds: 30);
            });

    [TestMethod]
    [DataRow("localhost")]
    [DataRow("127.0.0.1")]
    public async Task NetTcp_moves_every_row_over_its_TLS_upgrade_and_refuses_another_authority_with_IT3009(string host)
    {
        using var folder = new TempDirectory("it-tls-");
        using var other = new TempDirectory("it-tls-other-");
        TlsCertificates.MakeNew(other);
        var certificates = TlsCertificates.Ensure(folder);
        await using var databases = await TransferChecks.WithRecordsAsync("Sqlite", Records);
        await using var server = await RunningNetTcpServer.StartAsync(databases.Server, tls: certificates.ServerOptions());
        IntegrationTasks.Wcf.WcfClientTask Client(string tlsFolder, FakeBuildEngine engine) =>
            new IntegrationTasks.Wcf.NetTcpSmallBatchesAsync
            {
                Address = host == "localhost" ? server.LocalhostAddress : server.Address, Tls = true, TlsFolder = tlsFolder, MaxInFlight = 3, MaxReconnects = 1,
            }.For(databases, engine, 8, 250, timeoutSeconds: 30);
        var refused = new FakeBuildEngine();
        Assert.IsFalse(await Task.Run(Client(other, refused).Execute), refused.Log);
        Assert.IsTrue(refused.HasErrorCode(ErrorCodes.TlsRefused), refused.Log);
        var engine = new FakeBuildEngine();
        await Client(folder, engine).AssertMovesEveryRowAsync(engine, databases, Records);

        // A plaintext client at the TLS endpoint: refused, the server's line coded.
        var plaintext = new FakeBuildEngine();
        var plain = new IntegrationTasks.Wcf.NetTcpSmallBatchesAsync { Address = server.Address, MaxReconnects = 1 }.For(databases, plaintext, 8, 250, timeoutSeconds: 30);
        Assert.IsFalse(await Task.Run(plain.Execute), plaintext.Log);
        Assert.IsFalse(plaintext.HasErrorCode(ErrorCodes.Unexpected), plaintext.Log);
        await Eventually.WaitUntilAsync(() => server.Log.Lines.Any(l => l.StartsWith($"warning {ErrorCodes.TlsRefused}: ", StringComparison.Ordinal)), "the server's coded line",
            TimeSpan.FromSeconds(15), () => string.Join("\n", server.Log.Lines));

        // A server whose certificate, from the trusted authority, names another host: refused by the name check.
        using var misnamed = new TempDirectory("it-tls-misnamed-");
        var wrongName = TlsCertificates.MakeNew(misnamed, ["other.example"]);
        await using var elsewhere = await RunningNetTcpServer.StartAsync(databases.Server, tls: wrongName.ServerOptions());
        var named = new FakeBuildEngine();
        var client = new IntegrationTasks.Wcf.NetTcpSmallBatchesAsync
        {
            Address = host == "localhost" ? elsewhere.LocalhostAddress : elsewhere.Address, Tls = true, TlsFolder = misnamed, MaxReconnects = 1,
        }.For(databases, named, 8, 250, timeoutSeconds: 30);
        Assert.IsFalse(await Task.Run(client.Execute), named.Log);
        Assert.IsTrue(named.HasErrorCode(ErrorCodes.TlsRefused), named.Log);
    }

    [TestMethod]
    public async Task A_pooled_net_tcp_connection_upgrades_to_TLS_again_for_its_next_session()
    {
        using var folder = new TempDirectory("it-tls-");
        var certificates = TlsCertificates.Ensure(folder);
        await using var databases = await TransferChecks.WithRecordsAsync("Sqlite", Records);
        await using var server = await RunningNetTcpServer.StartAsync(databases.Server, tls: certificates.ServerOptions());
        var factory = new IntegrationTasks.Wcf.WcfClient(IntegrationTasks.Wcf.WcfBinding.NetTcp, IntegrationTasks.Wcf.WcfVariant.SmallBatches, new Uri(server.Address), "NetTcpServer")
        {
            Authority = certificates.LoadAuthority(), CallTimeout = TimeSpan.FromSeconds(20),
        }.CreateFactory();
        try
        {
            // WCF returns a closed channel's raw connection to its factory's pool; the next channel sends its preamble, and its own
            // upgrade, on that connection in plaintext.
            for (var channel = 0; channel < 3; channel++)
            {
                var service = factory.CreateChannel();
                ((System.ServiceModel.IClientChannel)service).Open();
                Assert.HasCount(10, await service.GetRecordsAsync(1 + 10 * channel, 10), $"channel {channel}");
                ((System.ServiceModel.IClientChannel)service).Close();
            }
            factory.Close();
        }
        finally
        {
            factory.Abort();
        }
        Assert.IsFalse(server.Log.Lines.Any(l => l.StartsWith("warning", StringComparison.Ordinal)), string.Join("\n", server.Log.Lines));
    }

    [TestMethod]
    public Task HttpRequest_moves_every_row_over_HTTPS_and_refuses_another_authority_with_IT3009() =>
        AssertHostTransportOverTlsAsync(new IntegrationTasks.Http.HttpServer(), IntegrationTasks.Http.HttpRecordsProtocol.Path,
            (server, databases, tlsFolder, engine) => new IntegrationTasks.Http.HttpRequest { Uri = server.Url, Tls = true, TlsFolder = tlsFolder }
                .For(databases, engine, 8, 250, timeoutSeconds: 30));

    /// <summary>
    /// A transport of the host process with Tls=true: a client trusting another authority is IT3009, <paramref name="alsoRefused"/>
    /// checks what else the transport refuses, and then a client trusting the server's authority moves every row over https://.
    /// </summary>
    private static async Task AssertHostTransportOverTlsAsync(IntegrationTasks.Transfer.HostModuleServerTask task, string path,
        Func<RunningHostModule, TestDatabases, string, FakeBuildEngine, IntegrationTasks.Transfer.TransferClientTask> client,
        Func<RunningHostModule, TestDatabases, Task>? alsoRefused = null)
    {
        using var folder = new TempDirectory("it-tls-");
        using var other = new TempDirectory("it-tls-other-");
        TlsCertificates.MakeNew(other);
        await using var databases = await TransferChecks.WithRecordsAsync("Sqlite", Records);
        task.Tls = true;
        task.TlsFolder = folder;
        await using var server = await RunningHostModule.StartAsync(task, databases, path);
        StringAssert.StartsWith(server.Url, "https://");

        var refused = new FakeBuildEngine();
        Assert.IsFalse(await Task.Run(client(server, databases, other, refused).Execute), refused.Log);
        Assert.IsTrue(refused.HasErrorCode(ErrorCodes.TlsRefused), refused.Log);
        // The client refused the certificate after the handshake: the host says so in one coded line.
        await Eventually.WaitUntilAsync(() => server.Log.Contains($"warning {ErrorCodes.TlsRefused}: ", StringComparison.Ordinal), "the host's coded line",
            TimeSpan.FromSeconds(15), () => server.Log);
        if (alsoRefused is not null)
            await alsoRefused(server, databases);

        var engine = new FakeBuildEngine();
        await client(server, databases, folder, engine).AssertMovesEveryRowAsync(engine, databases, Records);
    }

    [TestMethod]
    [System.Runtime.Versioning.UnsupportedOSPlatform("windows")]
    public void RunAll_with_Tls_runs_the_TLS_transports_over_it_keys_every_run_so_and_lists_a_plaintext_only_transport_as_not_run()
    {
        using var artifacts = new TempDirectory("it-runall-tls-");
        var (exitCode, output) = HostingTests.RunBuild("RunAll", artifacts, "-p:Transports=TcpClient2+RestJson+GrpcClient+WebSocketClient+FileTransferRequest+PipelinedCopy", "-p:Tls=true",
            "-p:RecordCounts=2000", "-p:Repetitions=2", "-p:Warmup=false", "-p:Peers=false");
        Assert.AreEqual(0, exitCode, output);
        var runs = MeasurementLog.Read(Path.Combine(artifacts, "results", "runs.jsonl"));
        CollectionAssert.AreEquivalent(new[]
            {
                "TcpClient2", "TcpClient2", "RestJson", "RestJson", "GrpcClient", "GrpcClient", "WebSocketClient", "WebSocketClient", "PipelinedCopy", "PipelinedCopy",
            }, runs.Select(r => r.Transport).ToArray());
        Assert.IsTrue(runs.All(r => r.Verified && r.Key.Tls), string.Join("\n", runs));
        using var results = System.Text.Json.JsonDocument.Parse(File.ReadAllText(Path.Combine(artifacts, "results", "results.json")));
        var files = results.RootElement.GetProperty("notRun").EnumerateArray().Single(n => n.GetProperty("transport").GetString() == "FileTransferRequest");
        Assert.IsTrue(files.GetProperty("key").GetProperty("tls").GetBoolean());
        // Said to be beyond TLS's reach, with what protects it instead: its definition's own words, not "not yet".
        Assert.AreEqual(Definitions.Transports.Single(t => t["Identity"] == "FileTransferRequest")["NotEncryptable"], files.GetProperty("reason").GetString());
        // The certificates were made in the artifacts' tls folder, the owner's only, the key never in a log, a report or a server's log.
        var tls = Path.Combine(artifacts, "tls");
        Assert.AreEqual(UnixFileMode.UserRead | UnixFileMode.UserWrite | UnixFileMode.UserExecute, File.GetUnixFileMode(tls));
        var key = File.ReadAllLines(Path.Combine(tls, TlsCertificates.ServerKeyFile)).Where(l => !l.StartsWith("-----", StringComparison.Ordinal)).ToList();
        Assert.IsNotEmpty(key);
        var written = Directory.GetFiles(artifacts, "*", SearchOption.AllDirectories).Where(f => !f.StartsWith(tls, StringComparison.Ordinal)).ToList();
        Assert.IsNotEmpty(written.Where(f => f.Contains("/logs/", StringComparison.Ordinal)), "the servers' logs are among those read");
        foreach (var text in written.Where(f => !f.EndsWith(".db", StringComparison.Ordinal)).Select(File.ReadAllText).Append(output))
            Assert.IsFalse(key.Any(line => text.Contains(line, StringComparison.Ordinal)));
    }

    [TestMethod]
    public void RunAll_with_Tls_false_and_true_runs_both_passes_verified_and_reports_each_transports_TLS_cost()
    {
        using var artifacts = new TempDirectory("it-runall-tls-axis-");
        var (exitCode, output) = HostingTests.RunBuild("RunAll", artifacts, "-p:Transports=TcpClient2+RestJson+FileTransferRequest+PipelinedCopy", "-p:Tls=false+true",
            "-p:RecordCounts=2000", "-p:Repetitions=2", "-p:Warmup=false", "-p:Peers=false");
        Assert.AreEqual(0, exitCode, output);
        var runs = MeasurementLog.Read(Path.Combine(artifacts, "results", "runs.jsonl"));
        Assert.IsTrue(runs.All(r => r.Verified), output);
        // FileTransferRequest reads ranges, so PipelinedCopyRange comes with the plan; the references run in both passes.
        CollectionAssert.AreEquivalent(new[] { "FileTransferRequest", "PipelinedCopy", "PipelinedCopyRange", "RestJson", "TcpClient2" },
            runs.Where(r => !r.Key.Tls).Select(r => r.Transport).Distinct().ToArray());
        CollectionAssert.AreEquivalent(new[] { "PipelinedCopy", "PipelinedCopyRange", "RestJson", "TcpClient2" },
            runs.Where(r => r.Key.Tls).Select(r => r.Transport).Distinct().ToArray());
        Assert.AreEqual(18, runs.Count);
        var markdown = File.ReadAllText(Path.Combine(artifacts, "results", "results.md"));
        var costs = MarkdownTable.With(markdown, "Paired TLS × plaintext");
        CollectionAssert.AreEquivalent(new[] { "RestJson", "TcpClient2" }, costs.Rows.Select(r => r[0]).ToArray());
        foreach (var row in costs.Rows)
            Assert.IsGreaterThan(0.0, double.Parse(row[3], System.Globalization.CultureInfo.InvariantCulture), string.Join(" | ", row));
        using var results = System.Text.Json.JsonDocument.Parse(File.ReadAllText(Path.Combine(artifacts, "results", "results.json")));
        var files = results.RootElement.GetProperty("notRun").EnumerateArray().Single(n => n.GetProperty("transport").GetString() == "FileTransferRequest");
        Assert.IsTrue(files.GetProperty("key").GetProperty("tls").GetBoolean(), "left out of the TLS pass only");
        HostingTests.AssertEndedCleanly(artifacts);
    }

    [TestMethod]
    [TestCategory("Unit")]
    [System.Runtime.Versioning.UnsupportedOSPlatform("windows")]
    public void A_server_needing_more_names_gets_them_from_the_same_authority_and_the_names_before_are_kept()
    {
        using var folder = new TempDirectory("it-tls-");
        var first = TlsCertificates.Ensure(folder, ["localhost", "127.0.0.1", "broker.example"]);
        var authorityBefore = File.ReadAllText(first.AuthorityPath);
        // The authority's key is kept apart from the folder a client machine is given, owner-only.
        Assert.IsFalse(File.Exists(Path.Combine(folder, TlsCertificates.AuthorityKeyFile)));
        Assert.AreEqual((UnixFileMode.UserRead | UnixFileMode.UserWrite, UnixFileMode.UserRead | UnixFileMode.UserWrite | UnixFileMode.UserExecute),
            (File.GetUnixFileMode(first.AuthorityKeyPath), File.GetUnixFileMode(first.AuthorityFolder)));
        var second = TlsCertificates.Ensure(folder, ["localhost", "127.0.0.1", "10.1.2.3"]);
        Assert.AreEqual(authorityBefore, File.ReadAllText(second.AuthorityPath), "the same authority: what already serves stays trusted");
        using var server = second.LoadServerContext().TargetCertificate;
        var names = server.Extensions.OfType<X509SubjectAlternativeNameExtension>().Single();
        CollectionAssert.IsSubsetOf(new[] { "localhost", "broker.example" }, names.EnumerateDnsNames().ToArray());
        CollectionAssert.IsSubsetOf(new[] { "127.0.0.1", "10.1.2.3" }, names.EnumerateIPAddresses().Select(a => a.ToString()).ToArray());
        using var authority = second.LoadAuthority();
        Assert.IsTrue(TlsCertificates.IsFromAuthority(server, null, SslPolicyErrors.None, authority));
    }

    [TestMethod]
    [TestCategory("Unit")]
    public void A_callback_judged_certificate_must_chain_to_the_authority_alone_and_keep_the_stacks_name_check()
    {
        using var folder = new TempDirectory("it-tls-");
        using var other = new TempDirectory("it-tls-other-");
        using var expired = new TempDirectory("it-tls-expired-");
        var made = TlsCertificates.MakeNew(folder);
        using var authority = made.LoadAuthority();
        using var server = made.LoadServerContext().TargetCertificate;
        using var otherServer = TlsCertificates.MakeNew(other).LoadServerContext().TargetCertificate;
        var old = TlsCertificates.MakeNew(expired, notBefore: DateTimeOffset.UtcNow.AddDays(-10), validity: TimeSpan.FromDays(2));
        using var oldAuthority = old.LoadAuthority();
        using var oldServer = old.LoadServerContext().TargetCertificate;
        // The system's own chain does not know the private authority: that finding alone is what the authority answers.
        Assert.IsTrue(TlsCertificates.IsFromAuthority(server, null, SslPolicyErrors.RemoteCertificateChainErrors, authority));
        Assert.IsTrue(TlsCertificates.IsFromAuthority(server, null, SslPolicyErrors.None, authority));
        Assert.IsFalse(TlsCertificates.IsFromAuthority(server, null, SslPolicyErrors.RemoteCertificateChainErrors | SslPolicyErrors.RemoteCertificateNameMismatch, authority));
        Assert.IsFalse(TlsCertificates.IsFromAuthority(server, null, SslPolicyErrors.RemoteCertificateNotAvailable, authority));
        Assert.IsFalse(TlsCertificates.IsFromAuthority(otherServer, null, SslPolicyErrors.RemoteCertificateChainErrors, authority));
        Assert.IsFalse(TlsCertificates.IsFromAuthority(oldServer, null, SslPolicyErrors.RemoteCertificateChainErrors, oldAuthority));
        // The client certificate, from the same authority, is no server's: made for client authentication only.
        using var client = made.LoadClientContext().TargetCertificate;
        Assert.IsFalse(TlsCertificates.IsFromAuthority(client, null, SslPolicyErrors.RemoteCertificateChainErrors, authority));
        Assert.IsTrue(TlsCertificates.IsClientFromAuthority(client, null, SslPolicyErrors.RemoteCertificateChainErrors, authority));
        Assert.IsFalse(TlsCertificates.IsClientFromAuthority(server, null, SslPolicyErrors.RemoteCertificateChainErrors, authority));
    }

    [TestMethod]
    [TestCategory("Unit")]
    [System.Runtime.Versioning.UnsupportedOSPlatform("windows")]
    public void The_certificates_are_made_once_owner_only_and_chain_to_the_authority_with_the_local_names()
    {
        using var folder = new TempDirectory("it-tls-");
        var made = TlsCertificates.Ensure(folder);
        var first = File.ReadAllText(made.ServerCertificatePath);
        Assert.AreEqual(first, File.ReadAllText(TlsCertificates.Ensure(folder).ServerCertificatePath), "kept while valid");
        foreach (var file in new[] { made.AuthorityPath, made.ServerCertificatePath, made.ServerKeyPath })
            Assert.AreEqual(UnixFileMode.UserRead | UnixFileMode.UserWrite, File.GetUnixFileMode(file), file);
        Assert.AreEqual(UnixFileMode.UserRead | UnixFileMode.UserWrite | UnixFileMode.UserExecute, File.GetUnixFileMode(made.Folder));

        using var authority = made.LoadAuthority();
        var context = made.LoadServerContext();
        using var chain = new X509Chain();
        chain.ChainPolicy.TrustMode = X509ChainTrustMode.CustomRootTrust;
        chain.ChainPolicy.RevocationMode = X509RevocationMode.NoCheck;
        chain.ChainPolicy.CustomTrustStore.Add(authority);
        Assert.IsTrue(chain.Build(context.TargetCertificate), string.Join(", ", chain.ChainStatus.Select(s => s.Status)));
        foreach (var name in TlsCertificates.LocalNames)
            Assert.IsTrue(context.TargetCertificate.MatchesHostname(name), name);
        Assert.IsFalse(context.TargetCertificate.MatchesHostname("other.example"));

        // A server bound to another address needs it named: made again with it (a client on another host connects by it).
        var bound = TlsCertificates.Ensure(folder, TlsCertificates.NamesFor("198.18.0.1"));
        Assert.AreNotEqual(first, File.ReadAllText(bound.ServerCertificatePath));
        Assert.IsTrue(bound.LoadServerContext().TargetCertificate.MatchesHostname("198.18.0.1"));
        first = File.ReadAllText(bound.ServerCertificatePath);

        // One about to expire is made again; so is a folder left half made (a key that is not the certificate's).
        TlsCertificates.MakeNew(folder, notBefore: DateTimeOffset.UtcNow.AddDays(-29), validity: TimeSpan.FromDays(29.5));
        Assert.AreNotEqual(first, File.ReadAllText(TlsCertificates.Ensure(folder).ServerCertificatePath));
        using var elsewhere = new TempDirectory("it-tls-elsewhere-");
        File.Copy(TlsCertificates.MakeNew(elsewhere).ServerKeyPath, made.ServerKeyPath, overwrite: true);
        var remade = TlsCertificates.Ensure(folder);
        Assert.IsNotNull(remade.LoadServerContext().TargetCertificate);

        // Certificates the suite did not make are never replaced: one that does not serve is a coded refusal, the files left as they were.
        File.Delete(Path.Combine(folder, TlsCertificates.MadeHereFile));
        var theirs = File.ReadAllText(made.ServerCertificatePath);
        Assert.AreEqual(ErrorCodes.TlsRefused, Assert.ThrowsExactly<IntegrationException>(() => TlsCertificates.Ensure(folder, ["other.example"])).Code);
        Assert.AreEqual(theirs, File.ReadAllText(made.ServerCertificatePath));
    }
}
