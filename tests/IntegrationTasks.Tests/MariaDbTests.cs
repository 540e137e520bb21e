using MySqlConnector;

namespace IntegrationTasks.Tests;

/// <summary>MariaDB as a third provider: its columns lossless, its private server its owner's alone, a RunAll on it end to end.</summary>
[TestClass]
[TestCategory("EndToEnd")]
public sealed class MariaDbTests
{
    private static readonly DateTime Base = new(2014, 5, 10, 13, 0, 0, DateTimeKind.Unspecified);

    /// <summary>The values a column could round or fold: the last bit of a double, microseconds, NULL beside "", UTF-8 beyond the BMP, a megabyte each way.</summary>
    private static List<ServiceRecord> EdgeRows()
    {
        var bytes = new byte[1 << 20];
        new Random(7).NextBytes(bytes);
        var text = string.Concat(Enumerable.Repeat("aü€😀\t\n'\\\"%_ ", 80_000));
        return
        [
            new(1, "", 0.1 + 0.2, Base.AddTicks(1_234_560), null, ""),
            new(2, "trailing space  ", double.MaxValue, Base.AddTicks(9_999_990), "", null),
            new(3, string.Concat(Enumerable.Repeat("😀", 100)), 2.2250738585072014E-308, new DateTime(1, 1, 1), "ü€", "x"),
            new(4, "ends with a NUL-free tab\t", -1.0 / 3, new DateTime(9999, 12, 31, 23, 59, 59).AddTicks(9_999_990), null, null, Payload: bytes),
            new(5, "text payload", Math.PI, Base, null, null, PayloadText: text),
            new(6, "empty payload", double.Epsilon, Base, null, null, Payload: []),
        ];
    }

    [TestMethod]
    [DataRow(false)]
    [DataRow(true)]
    public async Task Every_field_comes_back_as_it_went_in_to_the_last_bit_and_byte(bool ignoreExisting)
    {
        await using var databases = await TestDatabases.MariaDbAsync();
        await databases.Client.EnsureSchemaAsync(CancellationToken.None);
        var rows = EdgeRows();
        await using (var writer = await RecordWriter.OpenAsync(databases.Client, RecordTable.Client, CancellationToken.None, ignoreExisting))
            await writer.InsertBatchAsync(rows, CancellationToken.None);
        var read = new List<ServiceRecord>();
        await foreach (var row in RecordReader.ReadOrderedAsync(databases.Client, RecordTable.Client, null, null, CancellationToken.None))
            read.Add(row);
        Assert.HasCount(rows.Count, read);
        for (var i = 0; i < rows.Count; i++)
            Assert.IsTrue(rows[i].SameValuesAs(read[i]), $"row {rows[i].Id}: {read[i] with { Payload = null, PayloadText = read[i].PayloadText?[..10] }}");
    }

    /// <summary>
    /// The one double a MariaDB DOUBLE column does not keep: -0.0 comes back as 0.0 (the suite's data set holds none; its negative
    /// values are never zero). Asserted, so that the docs stay true if a release keeps the sign.
    /// </summary>
    [TestMethod]
    public async Task Negative_zero_comes_back_as_zero_the_one_double_the_column_changes()
    {
        await using var databases = await TestDatabases.MariaDbAsync();
        await databases.Client.EnsureSchemaAsync(CancellationToken.None);
        await using (var writer = await RecordWriter.OpenAsync(databases.Client, RecordTable.Client, CancellationToken.None))
            await writer.InsertBatchAsync([SampleData.Create(1) with { Value = -0.0 }], CancellationToken.None);
        var read = new List<ServiceRecord>();
        await foreach (var row in RecordReader.ReadOrderedAsync(databases.Client, RecordTable.Client, null, null, CancellationToken.None))
            read.Add(row);
        Assert.HasCount(1, read);
        Assert.AreEqual(0L, BitConverter.DoubleToInt64Bits(read[0].Value));
    }

    /// <summary>
    /// An import that may see a batch twice skips only the repeated IDs however many there are: a NULL in a NOT NULL column after
    /// a hundred of them (more than the 64 warnings a server keeps by default) still fails the whole batch.
    /// </summary>
    [TestMethod]
    public async Task Behind_a_hundred_repeated_IDs_a_changed_row_still_fails_its_batch()
    {
        await using var databases = await TestDatabases.MariaDbAsync();
        await databases.Client.EnsureSchemaAsync(CancellationToken.None);
        static List<ServiceRecord> Rows(int first, int last) => [.. Enumerable.Range(first, last - first + 1).Select(id => SampleData.Create(id))];
        await using var writer = await RecordWriter.OpenAsync(databases.Client, RecordTable.Client, CancellationToken.None, ignoreExisting: true);
        await writer.InsertBatchAsync(Rows(1, 100), CancellationToken.None);
        var again = Rows(1, 110);
        again[105] = again[105] with { Desc = null! };
        var e = await Assert.ThrowsExactlyAsync<IntegrationException>(() => writer.InsertBatchAsync(again, CancellationToken.None));
        Assert.AreEqual(ErrorCodes.DatabaseFailure, e.Code);
        Assert.AreEqual(100, await databases.Client.CountAsync(RecordTable.Client, CancellationToken.None));
        // The same batch whole: the hundred skipped, the ten new ones in.
        await writer.InsertBatchAsync(Rows(1, 110), CancellationToken.None);
        Assert.AreEqual(110, await databases.Client.CountAsync(RecordTable.Client, CancellationToken.None));
    }

    [TestMethod]
    public async Task A_server_lookup_reads_each_row_exactly_per_ID_and_by_range()
    {
        await using var databases = await TestDatabases.MariaDbAsync();
        await databases.Server.EnsureSchemaAsync(CancellationToken.None);
        var rows = EdgeRows();
        await using (var writer = await RecordWriter.OpenAsync(databases.Server, RecordTable.Service, CancellationToken.None))
            await writer.InsertBatchAsync(rows, CancellationToken.None);
        foreach (var work in new[] { ServerWork.PerRecord, ServerWork.Range })
        {
            await using var lookup = await RecordLookup.OpenAsync(databases.Server, work, CancellationToken.None);
            var read = new List<ServiceRecord>();
            await foreach (var record in lookup.ReadAsync(1, rows.Count, CancellationToken.None))
                read.Add(record);
            CollectionAssert.AreEqual(rows, read, $"{work}");
        }
    }

    [TestMethod]
    public async Task A_value_the_column_would_change_fails_its_batch_and_leaves_nothing_of_it()
    {
        await using var databases = await TestDatabases.MariaDbAsync();
        await databases.Client.EnsureSchemaAsync(CancellationToken.None);
        await using var writer = await RecordWriter.OpenAsync(databases.Client, RecordTable.Client, CancellationToken.None);
        // A string over the column's 200 characters: LOAD DATA LOCAL would cut it and warn.
        var tooLong = SampleData.Create(1) with { StringField1 = new string('x', 201) };
        var e = await Assert.ThrowsExactlyAsync<IntegrationException>(() => writer.InsertBatchAsync([SampleData.Create(2), tooLong], CancellationToken.None));
        Assert.AreEqual(ErrorCodes.DatabaseFailure, e.Code);
        Assert.AreEqual(0, await databases.Client.CountAsync(RecordTable.Client, CancellationToken.None));
    }

    [TestMethod]
    [System.Runtime.Versioning.UnsupportedOSPlatform("windows")]
    public void The_private_server_listens_on_loopback_only_its_folder_is_its_owners_and_stop_leaves_nothing()
    {
        // Under /tmp itself: the server's user must reach its folder, and a test's temporary folder is closed to everyone else.
        var directory = $"/tmp/it-mariadb-{Guid.NewGuid():N}";
        var port = TestPorts.Free();
        var environment = new Dictionary<string, string?> { ["IT_MARIADB_DIR"] = directory, ["IT_MARIADB_PORT"] = port.ToString() };
        try
        {
            var (exitCode, stdout, stderr) = RepositoryPaths.Run("bash", ["scripts/mariadb.sh", "start"], environment);
            Assert.AreEqual(0, exitCode, stderr);
            var connection = stdout.Trim().Split('\n')[^1];
            var password = new MySqlConnectionStringBuilder(connection).Password;
            Assert.IsGreaterThanOrEqualTo(24, password.Length);
            Assert.AreEqual(UnixFileMode.UserRead | UnixFileMode.UserWrite | UnixFileMode.UserExecute, File.GetUnixFileMode(directory));
            Assert.AreEqual(UnixFileMode.UserRead | UnixFileMode.UserWrite, File.GetUnixFileMode(Path.Combine(directory, "password")));
            var pid = int.Parse(File.ReadAllText(Path.Combine(directory, "mariadb.pid")).Trim());
            CollectionAssert.AreEqual(new[] { $"127.0.0.1:{port}" }, ListeningAddresses(pid));
            Assert.IsEmpty(Processes.CommandLines().Where(l => l.Contains(password, StringComparison.Ordinal)).ToList());
            // The suite's user with its password gets in; with another password, or as the administrator over TCP, nobody does.
            Assert.IsTrue(CanSignIn(connection));
            Assert.IsFalse(CanSignIn(new MySqlConnectionStringBuilder(connection) { Password = "wrong" }.ConnectionString));
            Assert.IsFalse(CanSignIn(new MySqlConnectionStringBuilder(connection) { UserID = "root", Password = "" }.ConnectionString));
            Assert.IsFalse(CanSignIn(new MySqlConnectionStringBuilder(connection) { UserID = "", Password = "" }.ConnectionString), "no anonymous account");
            Assert.IsFalse(CanSignIn(new MySqlConnectionStringBuilder(connection) { UserID = "mysql", Password = "" }.ConnectionString));
            var refused = Assert.ThrowsExactly<IntegrationException>(() =>
                Database.Create("MariaDb", new MySqlConnectionStringBuilder(connection) { Password = "wrong" }.ConnectionString).OpenAsync(CancellationToken.None).GetAwaiter().GetResult());
            Assert.AreEqual(ErrorCodes.DatabaseFailure, refused.Code);
            Assert.DoesNotContain("wrong", refused.Message);

            Assert.AreEqual(0, RepositoryPaths.Run("bash", ["scripts/mariadb.sh", "stop"], environment).ExitCode);
            Assert.IsFalse(Directory.Exists($"/proc/{pid}"), "the server ended");
            HostingTests.AssertPortFree(port);
            Assert.AreEqual(3, RepositoryPaths.Run("bash", ["scripts/mariadb.sh", "status"], environment).ExitCode);
        }
        finally
        {
            RepositoryPaths.Run("bash", ["scripts/mariadb.sh", "stop"], environment);
            if (Directory.Exists(directory))
                Directory.Delete(directory, recursive: true);
        }
    }

    private static bool CanSignIn(string connectionString)
    {
        try
        {
            using var connection = new MySqlConnection(new MySqlConnectionStringBuilder(connectionString) { Pooling = false }.ConnectionString);
            connection.Open();
            return true;
        }
        catch (MySqlException)
        {
            return false;
        }
    }

    /// <summary>The TCP addresses a process listens on, as ss shows them.</summary>
    private static List<string> ListeningAddresses(int pid)
    {
        var (_, stdout, _) = RepositoryPaths.Run("ss", ["-Hltnp"]);
        return [.. stdout.Split('\n').Where(l => l.Contains($"pid={pid},", StringComparison.Ordinal)).Select(l => l.Split(' ', StringSplitOptions.RemoveEmptyEntries)[3]).Distinct()];
    }

    [TestMethod]
    public async Task RunAll_on_MariaDB_both_sides_verifies_every_run_beside_its_peer_and_keeps_its_history_there()
    {
        using var artifacts = new TempDirectory("it-mariadb-runall-");
        await using var databases = await TestDatabases.MariaDbAsync();
        await using var history = await TestDatabases.MariaDbAsync();
        var (exitCode, stdout, stderr) = await Task.Run(() => RepositoryPaths.Run("dotnet",
            TestBuild.Arguments("RunAll", artifacts, "-v:n", "-p:Transports=TcpClient2+GrpcClient+RabbitMQDurable+PipelinedCopy", "-p:RecordCounts=1000",
                "-p:Repetitions=2", "-p:Warmup=false", "-p:Provider=MariaDb", "-p:HistoryProvider=MariaDb", "-p:PayloadBytes=0+4096"),
            new Dictionary<string, string?>
            {
                ["ServerConnString"] = databases.Server.ConnectionString, ["ClientConnString"] = databases.Client.ConnectionString,
                ["HistoryConnString"] = history.Server.ConnectionString,
            }));
        Assert.AreEqual(0, exitCode, stdout + stderr);
        var runs = IntegrationTasks.Transfer.MeasurementLog.Read(Path.Combine(artifacts, "results", "runs.jsonl"));
        // (three transports, the reference and the peer) × two payloads × two repetitions, every one verified row by row.
        Assert.HasCount(5 * 2 * 2, runs);
        Assert.IsTrue(runs.All(r => r.Verified), string.Join("\n", runs.Where(r => !r.Verified)));
        Assert.HasCount(4, runs.Where(r => r.Transport == "Peer: MariaDB LOAD DATA"));
        var results = ResultsJson.Load(Path.Combine(artifacts, "results"));
        StringAssert.Contains(results.Environment["Database"], "MariaDB");
        var entries = await ResultsHistory.Open("MariaDb", history.Server.ConnectionString).ListAsync(CancellationToken.None);
        Assert.AreEqual((1, HistoryEntry.Complete, runs.Count), (entries.Count, entries[0].Status, entries[0].Runs));
        HostingTests.AssertEndedCleanly(artifacts);
    }
}
