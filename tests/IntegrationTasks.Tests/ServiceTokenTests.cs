namespace IntegrationTasks.Tests;

/// <summary>ServiceToken: the web services of the ASP.NET Core host take only requests carrying their bearer token.</summary>
[TestClass]
public sealed class ServiceTokenTests
{
    private const int Records = 2000;

    [TestMethod]
    [TestCategory("Unit")]
    [System.Runtime.Versioning.UnsupportedOSPlatform("windows")]
    public void The_token_file_is_made_owner_only_once_and_a_server_beyond_loopback_needs_a_credential()
    {
        using var folder = new TempDirectory("it-token-");
        var file = Path.Combine(folder, "credentials", "Services.json");
        var made = ServiceToken.ForServer("The host", "10.0.0.1", file, clientCertificates: false)!;
        Assert.AreEqual(64, made.Token.Length);
        Assert.AreEqual(UnixFileMode.UserRead | UnixFileMode.UserWrite, File.GetUnixFileMode(file));
        Assert.AreEqual(UnixFileMode.UserRead | UnixFileMode.UserWrite | UnixFileMode.UserExecute, File.GetUnixFileMode(Path.GetDirectoryName(file)!));
        Assert.AreEqual(made.Token, ServiceToken.ForServer("The host", "127.0.0.1", file, clientCertificates: false)!.Token);
        Assert.AreEqual(made.Token, ServiceToken.Load(file)!.Token);
        Assert.DoesNotContain(made.Token, made.ToString());

        Assert.IsTrue(made.Admits("Bearer " + made.Token));
        Assert.IsFalse(made.Admits("Bearer " + made.Token[..^1] + "x"));
        Assert.IsFalse(made.Admits(made.Token));
        Assert.IsFalse(made.Admits(null));

        Assert.IsNull(ServiceToken.ForServer("The host", "127.0.0.1", "", clientCertificates: false));
        Assert.IsNull(ServiceToken.ForServer("The host", "10.0.0.1", "", clientCertificates: true), "mutual TLS is a credential");
        Assert.IsNull(ServiceToken.Load(""));
        foreach (var beyond in new[] { "10.0.0.1", "0.0.0.0", "[::]", "server.example" })
            Assert.AreEqual(ErrorCodes.InvalidParameter, Assert.ThrowsExactly<IntegrationException>(() => ServiceToken.ForServer("The host", beyond, "", false)).Code, beyond);
        Assert.AreEqual(ErrorCodes.InvalidParameter, Assert.ThrowsExactly<IntegrationException>(() => ServiceToken.Load(Path.Combine(folder, "none.json"))).Code);
        foreach (var (bad, name) in new[] { ("{\"token\": \"secret with spaces\"}", "space.json"), ("{\"user\": \"secret\"}", "notoken.json"), ("secret-not-json", "text.json") })
        {
            File.WriteAllText(Path.Combine(folder, name), bad);
            var refused = Assert.ThrowsExactly<IntegrationException>(() => ServiceToken.Load(Path.Combine(folder, name)));
            Assert.AreEqual(ErrorCodes.InvalidParameter, refused.Code, name);
            Assert.DoesNotContain("secret", refused.Message, "the file's text is never quoted");
        }
    }

    [TestMethod]
    [TestCategory("EndToEnd")]
    [DataRow("-p:BindAddress=127.0.0.1", "false")]
    [DataRow("-p:BindAddress=0.0.0.0", "true")]
    [DataRow("-p:Hosts=Two", "true")]
    public void Auto_uses_the_token_and_the_brokers_credentials_whenever_servers_listen_beyond_loopback(string setting, string used)
    {
        var (code, stdout, stderr) = RepositoryPaths.Run("dotnet", ["msbuild", RepositoryPaths.BuildProject, "-nologo", setting,
            "-getProperty:_ServiceTokenUsed", "-getProperty:_BrokerCredentialsUsed"]);
        Assert.AreEqual(0, code, stderr);
        using var json = System.Text.Json.JsonDocument.Parse(stdout);
        var properties = json.RootElement.GetProperty("Properties");
        Assert.AreEqual((used, used), (properties.GetProperty("_ServiceTokenUsed").GetString(), properties.GetProperty("_BrokerCredentialsUsed").GetString()));
    }

    [TestMethod]
    [TestCategory("EndToEnd")]
    public async Task A_host_beyond_loopback_without_a_token_or_client_certificates_refuses_to_start_with_IT1001()
    {
        await using var databases = await TransferChecks.WithRecordsAsync("Sqlite", 10);
        var engine = new FakeBuildEngine();
        var server = new RestServer
        {
            BuildEngine = engine, HostAssembly = RunningHostModule.HostAssembly, Url = "http://0.0.0.0:1",
            ServerProvider = databases.ProviderName, ServerConnString = databases.Server.ConnectionString,
        };
        Assert.IsFalse(await Task.Run(server.Execute), engine.Log);
        Assert.AreEqual(ErrorCodes.InvalidParameter, engine.Errors.Select(e => e.Code).Single(), engine.Log);
    }

    [TestMethod]
    [TestCategory("EndToEnd")]
    [DataRow("Http1")]
    [DataRow("Http2")]
    public Task RestJson_with_the_token_moves_every_row_and_without_it_is_refused_with_IT3010(string httpVersion) =>
        AssertTokenRequiredAsync(new RestServer { HttpVersion = httpVersion }, RestProtocol.Path,
            (server, tokenFile) => new RestJson { Uri = server.Url, HttpVersion = httpVersion, MaxInFlight = 3, TokenFile = tokenFile });

    [TestMethod]
    [TestCategory("EndToEnd")]
    public Task HttpRequest_with_the_token_moves_every_row_and_without_it_is_refused_with_IT3010() =>
        AssertTokenRequiredAsync(new IntegrationTasks.Http.HttpServer(), IntegrationTasks.Http.HttpRecordsProtocol.Path,
            (server, tokenFile) => new IntegrationTasks.Http.HttpRequest { Uri = server.Url, TokenFile = tokenFile });

    [TestMethod]
    [TestCategory("EndToEnd")]
    [DataRow(false)]
    [DataRow(true)]
    public Task Both_gRPC_transports_with_the_token_move_every_row_and_without_it_are_refused_with_IT3010(bool streaming) =>
        AssertTokenRequiredAsync(new IntegrationTasks.Grpc.GrpcServer { Connections = 2, Answerers = 2 }, "", (server, tokenFile) =>
        {
            IntegrationTasks.Grpc.GrpcClientTask client = streaming ? new IntegrationTasks.Grpc.GrpcStreaming() : new IntegrationTasks.Grpc.GrpcClient();
            client.Address = server.Url;
            client.MaxInFlight = 3;
            client.TokenFile = tokenFile;
            return client;
        });

    [TestMethod]
    [TestCategory("EndToEnd")]
    public Task WebSocketClient_with_the_token_moves_every_row_and_without_it_is_refused_with_IT3010() =>
        AssertTokenRequiredAsync(new IntegrationTasks.WebSockets.WebSocketServer(), IntegrationTasks.WebSockets.WebSocketProtocol.Path,
            (server, tokenFile) => new IntegrationTasks.WebSockets.WebSocketClient { Uri = server.Url.Replace("http://", "ws://", StringComparison.Ordinal), MaxInFlight = 3, TokenFile = tokenFile });

    [TestMethod]
    [TestCategory("EndToEnd")]
    [DataRow("SoapSmallBatchesAsync")]
    [DataRow("SoapSmallRequests")]
    public Task SOAP_with_the_token_moves_every_row_and_without_it_is_refused_with_IT3010(string transport) =>
        AssertTokenRequiredAsync(new IntegrationTasks.Wcf.SoapServer { Connections = 2, Answerers = 2 }, IntegrationTasks.Wcf.ServiceNames.SoapPath, (server, tokenFile) =>
        {
            var client = (IntegrationTasks.Wcf.WcfClientTask)Activator.CreateInstance(typeof(IntegrationTasks.Wcf.WcfClientTask).Assembly.GetType($"IntegrationTasks.Wcf.{transport}", throwOnError: true)!)!;
            client.Address = server.Url;
            client.MaxInFlight = 3;
            client.TokenFile = tokenFile;
            return client;
        });

    /// <summary>
    /// A host server with a token: a client with none and one with another token are each refused with IT3010 alone (the server's log
    /// one coded line each), then a client with the server's token moves every row.
    /// </summary>
    private static async Task AssertTokenRequiredAsync(IntegrationTasks.Transfer.HostModuleServerTask task, string path,
        Func<RunningHostModule, string, IntegrationTasks.Transfer.TransferClientTask> client)
    {
        using var folder = new TempDirectory("it-token-");
        var tokenFile = Path.Combine(folder, "Services.json");
        var otherFile = Path.Combine(folder, "Other.json");
        ServiceToken.ForServer("another", "127.0.0.1", otherFile, false);
        await using var databases = await TransferChecks.WithRecordsAsync("Sqlite", Records);
        task.TokenFile = tokenFile;
        await using var server = await RunningHostModule.StartAsync(task, databases, path);
        Assert.IsTrue(File.Exists(tokenFile), "the server made its token");

        foreach (var (file, refusals) in new[] { ("", 1), (otherFile, 2) })
        {
            var refused = new FakeBuildEngine();
            var attempt = client(server, file);
            attempt.MaxReconnects = 1;
            Assert.IsFalse(await Task.Run(attempt.For(databases, refused, 8, 250, timeoutSeconds: 30).Execute), refused.Log);
            CollectionAssert.AreEquivalent(new[] { ErrorCodes.CredentialsRefused }, refused.Errors.Select(e => e.Code).Distinct().ToArray(), refused.Log);
            await Eventually.WaitUntilAsync(() => server.Log.Split('\n').Count(l => l.Contains($"warning {ErrorCodes.CredentialsRefused}: ", StringComparison.Ordinal)) >= refusals,
                "the server's coded line", TimeSpan.FromSeconds(15), () => server.Log);
        }
        var token = ServiceToken.Load(tokenFile)!.Token;
        Assert.DoesNotContain(token, server.Log, "the token never reaches a log");

        var engine = new FakeBuildEngine();
        await client(server, tokenFile).For(databases, engine, 8, 250, timeoutSeconds: 30).AssertMovesEveryRowAsync(engine, databases, Records);
        Assert.DoesNotContain(token, engine.Log);
    }
}
