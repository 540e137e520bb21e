namespace IntegrationTasks.Tests;

/// <summary>ClientCertificates=true: the servers take only clients presenting a certificate from the suite's authority.</summary>
[TestClass]
[TestCategory("EndToEnd")]
public sealed class MutualTlsTests
{
    private const int Records = 2000;

    [TestMethod]
    public async Task A_TCP_server_asking_for_client_certificates_serves_only_a_client_with_one_from_its_authority()
    {
        using var folder = new TempDirectory("it-mtls-");
        using var other = new TempDirectory("it-mtls-other-");
        var certificates = TlsCertificates.Ensure(folder);
        TlsCertificates.MakeNew(other);
        // A client that trusts the server but holds another authority's client certificate: the same server name and trust, the wrong client.
        File.Copy(certificates.AuthorityPath, Path.Combine(other, TlsCertificates.AuthorityFile), overwrite: true);
        await using var databases = await TransferChecks.WithRecordsAsync("Sqlite", Records);
        await using var server = new RunningTcpServer(databases.Server, tls: certificates.ServerOptions(requireClientCertificate: true), connectionTimeout: TimeSpan.FromSeconds(5));
        foreach (var (tlsFolder, clientCertificate) in new[] { (folder.Path, false), (other.Path, true) })
        {
            var refused = new FakeBuildEngine();
            // A refused certificate shows to the client as a break after its handshake: one retry is enough to see it refused again.
            var client = TlsTransferTests.Client(databases, server.Port, refused, tlsFolder, clientCertificate: clientCertificate, maxReconnects: 1);
            Assert.IsFalse(await Task.Run(client.Execute), refused.Log);
            Assert.IsFalse(refused.HasErrorCode(ErrorCodes.Unexpected), refused.Log);
        }
        await Eventually.WaitUntilAsync(() => server.Log.Lines.Count(l => l.StartsWith($"warning {ErrorCodes.TlsRefused}: ", StringComparison.Ordinal)) >= 2,
            "the server's coded lines", TimeSpan.FromSeconds(15), () => string.Join("\n", server.Log.Lines));
        var engine = new FakeBuildEngine();
        await TlsTransferTests.Client(databases, server.Port, engine, folder, clientCertificate: true).AssertMovesEveryRowAsync(engine, databases, Records);
    }

    [TestMethod]
    public async Task A_REST_server_asking_for_client_certificates_serves_only_a_client_with_one()
    {
        using var folder = new TempDirectory("it-mtls-");
        await using var databases = await TransferChecks.WithRecordsAsync("Sqlite", Records);
        await using var server = await RunningHostModule.StartAsync(new RestServer { Tls = true, TlsFolder = folder, ClientCertificates = true }, databases, RestProtocol.Path);
        // Without a certificate, and with another authority's (the server's authority trusted, the client's own from elsewhere).
        using var other = new TempDirectory("it-mtls-other-");
        TlsCertificates.MakeNew(other);
        File.Copy(Path.Combine(folder, TlsCertificates.AuthorityFile), Path.Combine(other, TlsCertificates.AuthorityFile), overwrite: true);
        foreach (var (tlsFolder, clientCertificate) in new[] { (folder.Path, false), (other.Path, true) })
        {
            var refused = new FakeBuildEngine();
            var client = new RestJson { Uri = server.Url, Tls = true, TlsFolder = tlsFolder, ClientCertificates = clientCertificate, MaxInFlight = 2, MaxReconnects = 1 }
                .For(databases, refused, 8, 250, timeoutSeconds: 30);
            Assert.IsFalse(await Task.Run(client.Execute), refused.Log);
            Assert.IsFalse(refused.HasErrorCode(ErrorCodes.Unexpected), refused.Log);
        }
        var engine = new FakeBuildEngine();
        await new RestJson { Uri = server.Url, Tls = true, TlsFolder = folder, ClientCertificates = true, MaxInFlight = 2 }.For(databases, engine, 8, 250, timeoutSeconds: 30)
            .AssertMovesEveryRowAsync(engine, databases, Records);
    }

    [TestMethod]
    public async Task A_SOAP_server_asking_for_client_certificates_serves_only_a_client_with_one()
    {
        using var folder = new TempDirectory("it-mtls-");
        await using var databases = await TransferChecks.WithRecordsAsync("Sqlite", Records);
        await using var server = await RunningHostModule.StartAsync(new IntegrationTasks.Wcf.SoapServer { Tls = true, TlsFolder = folder, ClientCertificates = true, Connections = 2, Answerers = 2 },
            databases, IntegrationTasks.Wcf.ServiceNames.SoapPath);
        var refused = new FakeBuildEngine();
        var without = new IntegrationTasks.Wcf.SoapSmallBatchesAsync { Address = server.Url, Tls = true, TlsFolder = folder, MaxInFlight = 2, MaxReconnects = 1 }
            .For(databases, refused, 8, 250, timeoutSeconds: 30);
        Assert.IsFalse(await Task.Run(without.Execute), refused.Log);
        Assert.IsFalse(refused.HasErrorCode(ErrorCodes.Unexpected), refused.Log);
        // Kestrel refused the handshake: one coded line in the host's log.
        await Eventually.WaitUntilAsync(() => server.Log.Contains($"warning {ErrorCodes.TlsRefused}: ", StringComparison.Ordinal), "the host's coded line",
            TimeSpan.FromSeconds(15), () => server.Log);
        var engine = new FakeBuildEngine();
        await new IntegrationTasks.Wcf.SoapSmallBatchesAsync { Address = server.Url, Tls = true, TlsFolder = folder, ClientCertificates = true, MaxInFlight = 2 }
            .For(databases, engine, 8, 250, timeoutSeconds: 30).AssertMovesEveryRowAsync(engine, databases, Records);
    }

    [TestMethod]
    public async Task A_net_tcp_server_asking_for_client_certificates_serves_only_a_client_with_one()
    {
        using var folder = new TempDirectory("it-mtls-");
        var certificates = TlsCertificates.Ensure(folder);
        await using var databases = await TransferChecks.WithRecordsAsync("Sqlite", Records);
        await using var server = await RunningNetTcpServer.StartAsync(databases.Server, tls: certificates.ServerOptions(requireClientCertificate: true));
        var refused = new FakeBuildEngine();
        var without = new IntegrationTasks.Wcf.NetTcpSmallBatchesAsync { Address = server.Address, Tls = true, TlsFolder = folder, MaxInFlight = 2, MaxReconnects = 1 }
            .For(databases, refused, 8, 250, timeoutSeconds: 30);
        Assert.IsFalse(await Task.Run(without.Execute), refused.Log);
        Assert.IsFalse(refused.HasErrorCode(ErrorCodes.Unexpected), refused.Log);
        await Eventually.WaitUntilAsync(() => server.Log.Lines.Any(l => l.StartsWith($"warning {ErrorCodes.TlsRefused}: ", StringComparison.Ordinal)), "the server's coded line",
            TimeSpan.FromSeconds(15), () => string.Join("\n", server.Log.Lines));
        var engine = new FakeBuildEngine();
        await new IntegrationTasks.Wcf.NetTcpSmallBatchesAsync { Address = server.Address, Tls = true, TlsFolder = folder, ClientCertificates = true, MaxInFlight = 2 }
            .For(databases, engine, 8, 250, timeoutSeconds: 30).AssertMovesEveryRowAsync(engine, databases, Records);
    }

    [TestMethod]
    [System.Runtime.Versioning.UnsupportedOSPlatform("windows")]
    public void RunAll_with_client_certificates_verifies_every_run_and_says_so()
    {
        using var artifacts = new TempDirectory("it-mtls-runall-");
        var (exitCode, output) = HostingTests.RunBuild("RunAll", artifacts, "-p:Transports=TcpClient2+GrpcClient+WebSocketClient+PipelinedCopy", "-p:Tls=true",
            "-p:ClientCertificates=true", "-p:RecordCounts=2000", "-p:Repetitions=1", "-p:Warmup=false", "-p:Peers=false");
        Assert.AreEqual(0, exitCode, output);
        var runs = MeasurementLog.Read(Path.Combine(artifacts, "results", "runs.jsonl"));
        Assert.HasCount(4, runs, output);
        Assert.IsTrue(runs.All(r => r.Verified && r.Key.Tls), output);
        Assert.AreEqual(UnixFileMode.UserRead | UnixFileMode.UserWrite, File.GetUnixFileMode(Path.Combine(artifacts, "tls", TlsCertificates.ClientKeyFile)));
        StringAssert.StartsWith(ResultsJson.Load(Path.Combine(artifacts, "results")).Environment["ClientCertificates"], "mutual TLS on");
        var (plainExit, plainOutput) = HostingTests.RunBuild("RunAll", artifacts, "-p:Transports=TcpClient2", "-p:ClientCertificates=true", "-p:Repetitions=1");
        Assert.AreNotEqual(0, plainExit);
        StringAssert.Contains(plainOutput, "error IT1001: ClientCertificates");
    }
}
