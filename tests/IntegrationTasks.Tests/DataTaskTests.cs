namespace IntegrationTasks.Tests;

/// <summary>The data tasks through a fake build engine: outputs on success, coded errors and false on failure.</summary>
[TestClass]
[TestCategory("EndToEnd")]
public sealed class DataTaskTests
{
    [TestMethod]
    public async Task Generate_empty_and_verify_as_tasks()
    {
        await using var databases = TestDatabases.Sqlite();
        var engine = new FakeBuildEngine();
        var generate = new DataGeneration { BuildEngine = engine, ServerConnString = databases.Server.ConnectionString, Records = 300 };
        Assert.IsTrue(generate.Execute(), engine.Log);
        Assert.AreEqual(300, generate.Inserted);

        var copy = new Baseline.DirectCopy
        {
            BuildEngine = engine, ServerConnString = databases.Server.ConnectionString,
            ClientConnString = databases.Client.ConnectionString, TotalBatches = 3, BatchSize = 100,
        };
        Assert.IsTrue(copy.Execute(), engine.Log);
        Assert.AreEqual(300, copy.Records);

        var verify = new VerifyTransfer
        {
            BuildEngine = engine, ServerConnString = databases.Server.ConnectionString,
            ClientConnString = databases.Client.ConnectionString, Records = 300,
        };
        Assert.IsTrue(verify.Execute(), engine.Log);
        Assert.AreEqual(300, verify.Matched);

        var empty = new EmptyClientTable { BuildEngine = engine, ClientConnString = databases.Client.ConnectionString };
        Assert.IsTrue(empty.Execute(), engine.Log);
        Assert.AreEqual(0, await databases.Client.CountAsync(RecordTable.Client, CancellationToken.None));

        // Now the client is empty: verification fails the build with IT3001 and names the loss.
        engine = new FakeBuildEngine();
        verify.BuildEngine = engine;
        Assert.IsFalse(verify.Execute());
        Assert.IsTrue(engine.HasErrorCode(ErrorCodes.VerificationFailed), engine.Log);
        StringAssert.Contains(engine.Log, "300 missing (first: 1, 2, 3");
    }

    [TestMethod]
    [DataRow("Oracle", "Data Source=x", ErrorCodes.UnknownProvider)]
    [DataRow("Sqlite", "", ErrorCodes.InvalidParameter)]
    [DataRow("Sqlite", "Data Source=/proc/none/x.db", ErrorCodes.DatabaseFailure)]
    [DataRow("PostgreSql", "Host=127.0.0.1;Port=1;Timeout=2", ErrorCodes.DatabaseFailure)]
    [DataRow("PostgreSql", "this is not a connection string", ErrorCodes.InvalidParameter)]
    public void Bad_databases_are_coded_errors(string provider, string connString, string code)
    {
        var engine = new FakeBuildEngine();
        var task = new DataGeneration { BuildEngine = engine, ServerProvider = provider, ServerConnString = connString, Records = 10 };
        Assert.IsFalse(task.Execute());
        Assert.IsTrue(engine.HasErrorCode(code), engine.Log);
    }

    [TestMethod]
    public void Cancelling_a_task_ends_it_quickly_and_returns_false()
    {
        using var databases = new DisposableSqlite();
        using var silent = SilentServer();
        var client = ClientOf(silent, databases, new FakeBuildEngine(), timeoutSeconds: 1800);
        var run = System.Threading.Tasks.Task.Run(client.Execute);
        Thread.Sleep(500);
        client.Cancel();
        Assert.IsTrue(run.Wait(TimeSpan.FromSeconds(10)), "Execute did not return after Cancel");
        Assert.IsFalse(run.Result);
    }

    [TestMethod]
    public void A_transfer_that_exceeds_its_timeout_fails_with_IT3004()
    {
        using var databases = new DisposableSqlite();
        using var silent = SilentServer();
        var engine = new FakeBuildEngine();
        Assert.IsFalse(ClientOf(silent, databases, engine, timeoutSeconds: 1).Execute());
        Assert.IsTrue(engine.HasErrorCode(ErrorCodes.Timeout), engine.Log);
    }

    /// <summary>A server that accepts connections and never answers: only a timeout or cancellation ends a client.</summary>
    private static System.Net.Sockets.TcpListener SilentServer()
    {
        var listener = new System.Net.Sockets.TcpListener(System.Net.IPAddress.Loopback, 0);
        listener.Start();
        return listener;
    }

    private static Tcp.TcpClient2 ClientOf(System.Net.Sockets.TcpListener server, DisposableSqlite databases, FakeBuildEngine engine, int timeoutSeconds) => new()
    {
        BuildEngine = engine, ClientConnString = databases.Value.Client.ConnectionString,
        Port = ((System.Net.IPEndPoint)server.LocalEndpoint).Port, TotalBatches = 1, BatchSize = 1, TimeoutSeconds = timeoutSeconds,
    };
}
