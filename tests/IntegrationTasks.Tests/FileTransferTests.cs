using IntegrationTasks.Files;

namespace IntegrationTasks.Tests;

[TestClass]
[TestCategory("EndToEnd")]
public sealed class FileTransferTests
{
    private static FileTransferClientTask Client(bool listIds, TestDatabases databases, string serverInbox, string clientInbox,
        FakeBuildEngine engine, int totalBatches = 10, int batchSize = 300)
    {
        FileTransferClientTask client = listIds ? new FileTransferBigRequest() : new FileTransferRequest();
        client.OutputDir = serverInbox;
        client.InputDir = clientInbox;
        return client.For(databases, engine, totalBatches, batchSize, timeoutSeconds: 60);
    }

    [TestMethod]
    [EachVariantOnEachDatabase]
    public async Task Both_file_transfers_move_every_row_intact(bool listIds, string provider)
    {
        await using var databases = await TransferChecks.WithRecordsAsync(provider, 3000);
        await using var server = new RunningFileServer(databases.Server);
        var engine = new FakeBuildEngine();
        var client = Client(listIds, databases, server.ServerInbox, server.ClientInbox, engine);
        await client.AssertMovesEveryRowAsync(engine, databases, 3000);
        Assert.IsGreaterThan(3000L * 100, client.BytesReceived);
        // Nothing is left behind in either inbox (but the serving server's own marker).
        CollectionAssert.AreEqual(new[] { FileExchange.ServerMarker }, Directory.GetFiles(server.ServerInbox).Select(Path.GetFileName).ToArray());
        Assert.IsEmpty(Directory.GetFiles(server.ClientInbox));
    }

    [TestMethod]
    [DataRow("a1.request.xml", "<request><id>1</id>", ErrorCodes.MalformedXml, DisplayName = "truncated request")]
    [DataRow("a2.request.xml", "\u0000\u0001garbage", ErrorCodes.MalformedXml, DisplayName = "garbage")]
    [DataRow("a3.request.xml", "<request><id>x</id></request>", ErrorCodes.InvalidFieldValue, DisplayName = "bad id")]
    [DataRow("a4.extract.xml", "<extract first=\"1\" count=\"-5\"/>", ErrorCodes.InvalidFieldValue, DisplayName = "negative count")]
    [DataRow("a5.extract.xml", "<extract first=\"2147483647\" count=\"10\"/>", ErrorCodes.InvalidFieldValue, DisplayName = "range overflow")]
    [DataRow("a6.extract.xml", "<other/>", ErrorCodes.MalformedXml, DisplayName = "wrong element")]
    public async Task A_bad_request_file_is_moved_aside_with_a_coded_error_and_the_server_goes_on(string name, string content, string code)
    {
        await using var databases = await TransferChecks.WithRecordsAsync("Sqlite", 1000);
        await using var server = new RunningFileServer(databases.Server);
        var id = name[..name.IndexOf('.')];
        await File.WriteAllTextAsync(Path.Combine(server.ServerInbox, name + ".tmp"), content);
        File.Move(Path.Combine(server.ServerInbox, name + ".tmp"), Path.Combine(server.ServerInbox, name));

        var error = Path.Combine(server.ClientInbox, id + FileExchange.ErrorSuffix);
        await Eventually.WaitUntilAsync(() => File.Exists(error), $"the error file {error}");
        StringAssert.StartsWith(await File.ReadAllTextAsync(error), $"{code}: ");
        Assert.IsTrue(File.Exists(Path.Combine(server.ServerInbox, "rejected", name)), "moved aside");
        Assert.IsTrue(server.Log.Lines.Any(l => l.StartsWith($"warning {code}", StringComparison.Ordinal)), string.Join("\n", server.Log.Lines));
        File.Delete(error);

        var engine = new FakeBuildEngine();
        Assert.IsTrue(await Task.Run(Client(true, databases, server.ServerInbox, server.ClientInbox, engine, 2, 500).Execute), engine.Log);
    }

    [TestMethod]
    public async Task Files_that_are_not_requests_are_left_alone()
    {
        await using var databases = await TransferChecks.WithRecordsAsync("Sqlite", 500);
        await using var server = new RunningFileServer(databases.Server);
        string[] strangers = ["half.request.xml.tmp", "notes.txt", "../escape.request.xml.txt", "x y.request.xml"];
        foreach (var stranger in strangers.Select(Path.GetFileName))
            await File.WriteAllTextAsync(Path.Combine(server.ServerInbox, stranger!), "<request><id>1</id></request>");
        var engine = new FakeBuildEngine();
        Assert.IsTrue(await Task.Run(Client(false, databases, server.ServerInbox, server.ClientInbox, engine, 1, 500).Execute), engine.Log);
        foreach (var stranger in strangers.Select(Path.GetFileName))
            Assert.IsTrue(File.Exists(Path.Combine(server.ServerInbox, stranger!)), $"{stranger} was touched");
        Assert.AreEqual(0, server.Server.Rejected);
    }

    [TestMethod]
    public async Task The_client_reports_the_servers_coded_error()
    {
        await using var databases = TestDatabases.Sqlite();
        using var root = new TempDirectory("it-files-");
        string serverInbox = Path.Combine(root, "s"), clientInbox = Path.Combine(root, "c");
        var engine = new FakeBuildEngine();
        // Play the server: say it serves (its marker, this live process), then answer the request with an error file.
        Directory.CreateDirectory(serverInbox);
        FileExchange.WriteServerMarker(serverInbox);
        var run = Task.Run(Client(true, databases, serverInbox, clientInbox, engine).Execute);
        await Eventually.WaitUntilAsync(() => Directory.Exists(serverInbox) && Directory.GetFiles(serverInbox, "*.request.xml").Length == 1, "one request file in the server's inbox");
        var id = Path.GetFileName(Directory.GetFiles(serverInbox, "*.request.xml")[0]).Split('.')[0];
        await FileExchange.PublishAsync(clientInbox, id + FileExchange.ErrorSuffix, async stream =>
        {
            await using var writer = new StreamWriter(stream, leaveOpen: true);
            await writer.WriteAsync("IT2002: <id> 'x' is not an integer.");
        }, CancellationToken.None);
        Assert.IsFalse(await run);
        Assert.IsTrue(engine.HasErrorCode(ErrorCodes.InvalidFieldValue), engine.Log);
        StringAssert.Contains(engine.Log, "The file server refused the request");
    }

    [TestMethod]
    public async Task Without_a_server_the_client_fails_within_ConnectionTimeoutSeconds_with_IT3003_and_leaves_no_request()
    {
        // It used to wait its whole TimeoutSeconds (30 min) and leave a request that a later server answered into an orphan response.
        await using var databases = TestDatabases.Sqlite();
        using var root = new TempDirectory("it-files-");
        var engine = new FakeBuildEngine();
        var serverInbox = Path.Combine(root, "s");
        Directory.CreateDirectory(serverInbox);
        // A marker left by a server that is gone (a process id no longer alive) does not count.
        File.WriteAllText(Path.Combine(serverInbox, FileExchange.ServerMarker), $"{Environment.MachineName} {int.MaxValue}");
        var client = (FileTransferRequest)Client(false, databases, serverInbox, Path.Combine(root, "c"), engine);
        client.ConnectionTimeoutSeconds = 1;
        Assert.IsFalse(await Task.Run(client.Execute));
        Assert.IsTrue(engine.HasErrorCode(ErrorCodes.ConnectionFailed), engine.Log);
        StringAssert.Contains(engine.Log, "dotnet msbuild build.proj -t:FileTransferTestServer");
        Assert.IsEmpty(Directory.GetFiles(serverInbox, "*.xml"));
    }

    [TestMethod]
    public async Task A_server_marks_its_inbox_while_it_serves_and_clears_it_when_it_stops()
    {
        await using var databases = TestDatabases.Sqlite();
        using var root = new TempDirectory("it-files-");
        var inbox = Path.Combine(root, "s");
        var server = new FileTransferServer(new RecordSource(databases.Server, ServerWork.PerRecord), inbox, Path.Combine(root, "c"), NullEventLog.Instance);
        Assert.IsFalse(FileExchange.ServerIsServing(inbox));
        server.Start();
        Assert.IsTrue(FileExchange.ServerIsServing(inbox));
        server.Dispose();
        Assert.IsFalse(File.Exists(Path.Combine(inbox, FileExchange.ServerMarker)));
        Assert.IsFalse(FileExchange.ServerIsServing(inbox));
    }

    [TestMethod]
    public async Task Requests_beyond_the_servers_maximum_are_each_answered_at_once_with_IT3008_and_the_first_is_served()
    {
        await using var databases = await TransferChecks.WithRecordsAsync("Sqlite", 300);
        using var root = new TempDirectory("it-files-");
        var (inbox, outbox) = (Path.Combine(root, "s"), Path.Combine(root, "c"));
        Directory.CreateDirectory(inbox);
        string[] ids = ["first", "second", "third"];
        foreach (var id in ids)
        {
            await FileExchange.PublishAsync(inbox, id + FileExchange.ExtractSuffix, stream => { ExtractRequest.Write(stream, 1, 100); return Task.CompletedTask; },
                CancellationToken.None);
            File.SetLastWriteTimeUtc(Path.Combine(inbox, id + FileExchange.ExtractSuffix), DateTime.UtcNow.AddSeconds(Array.IndexOf(ids, id) - 10));
        }
        var log = new CapturingLog();
        using var server = new FileTransferServer(new RecordSource(databases.Server, ServerWork.PerRecord), inbox, outbox, log) { MaxPendingRequests = 1 };
        server.Start();
        using var stop = new CancellationTokenSource();
        var serving = server.RunAsync(stop.Token);
        await Eventually.WaitUntilAsync(() => server.Answered + server.Rejected == 3, "the three requests handled", seen: () => string.Join("\n", log.Lines));
        await stop.CancelAsync();
        await serving;

        Assert.IsTrue(File.Exists(Path.Combine(outbox, "first" + FileExchange.ResponseSuffix)), "the oldest request is served");
        foreach (var id in ids[1..])
            StringAssert.StartsWith(await File.ReadAllTextAsync(Path.Combine(outbox, id + FileExchange.ErrorSuffix)),
                "IT3008: 1 requests are waiting");
        Assert.AreEqual(2, log.Lines.Count(l => l.StartsWith("warning IT3008:", StringComparison.Ordinal)), string.Join("\n", log.Lines));
    }
}
