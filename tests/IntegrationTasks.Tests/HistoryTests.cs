namespace IntegrationTasks.Tests;

/// <summary>The results database: every RunAll's runs as they are recorded, its environment at its report, Compare by id.</summary>
[TestClass]
public sealed class HistoryTests
{
    private static Measurement Run(string transport, double seconds, int repetition, int records = 2000) => new()
    {
        Transport = transport, Records = records, BatchSize = 500, Repetition = repetition, ElapsedSeconds = seconds, Verified = true,
        Timestamp = new DateTimeOffset(2026, 11, 29, 1, 0, repetition, TimeSpan.Zero),
    };

    [TestMethod]
    [TestCategory("Unit")]
    public Task On_SQLite_a_RunAll_is_readable_run_by_run_before_its_report_and_compared_with_the_previous_one_like_it()
    {
        var folder = new TempDirectory("it-history-");
        return WithFolder(folder, () => AssertRoundTripAsync(ResultsHistory.Open("Sqlite", $"Data Source={Path.Combine(folder, "results.db")}")));
    }

    [TestMethod]
    [TestCategory("EndToEnd")]
    public async Task On_PostgreSQL_a_RunAll_is_readable_run_by_run_before_its_report_and_compared_with_the_previous_one_like_it()
    {
        await using var databases = await TestDatabases.PostgresAsync();
        await AssertRoundTripAsync(ResultsHistory.Open("PostgreSql", databases.Server.ConnectionString));
    }

    [TestMethod]
    [TestCategory("EndToEnd")]
    public async Task On_MariaDB_a_RunAll_is_readable_run_by_run_before_its_report_and_compared_with_the_previous_one_like_it()
    {
        await using var databases = await TestDatabases.MariaDbAsync();
        await AssertRoundTripAsync(ResultsHistory.Open("MariaDb", databases.Server.ConnectionString));
    }

    private static async Task WithFolder(TempDirectory folder, Func<Task> test)
    {
        using (folder)
            await test();
    }

    private static async Task AssertRoundTripAsync(ResultsHistory history)
    {
        var settings = RunHistory.Settings(new Dictionary<string, string> { ["Transports"] = "TcpClient2", ["ServerConnString"] = "Host=x;Password=secret" });
        Assert.AreEqual("(set)", settings["ServerConnString"], "a connection string may hold a password: never kept");

        var first = await history.BeginAsync(DateTimeOffset.UtcNow, "abc123", "machine", "/r", settings, CancellationToken.None);
        await history.AppendAsync(first, Run("TcpClient2", 1.0, 1), CancellationToken.None);
        await history.AppendAsync(first, Run("TcpClient2", 1.2, 2), CancellationToken.None);
        // Before its report (a build killed here): the runs are there, the RunAll not finished.
        var running = (await history.ListAsync(CancellationToken.None)).Single();
        Assert.AreEqual((first, HistoryEntry.Running, 2, "abc123"), (running.Id, running.Status, running.Runs, running.Commit));
        CollectionAssert.AreEqual(new[] { 1.0, 1.2 }, (await history.LoadAsync(first, CancellationToken.None)).Measurements.Select(m => m.ElapsedSeconds).ToArray());
        await history.FinishAsync(first, new Dictionary<string, string> { ["Cores"] = "2" }, settings, DateTimeOffset.UtcNow, CancellationToken.None);

        var unlike = await history.BeginAsync(DateTimeOffset.UtcNow, "abc124", "machine", "/r", settings, CancellationToken.None);
        await history.AppendAsync(unlike, Run("TcpClient2", 5.0, 1, records: 50_000), CancellationToken.None);
        await history.FinishAsync(unlike, new Dictionary<string, string>(), settings, DateTimeOffset.UtcNow, CancellationToken.None);

        var second = await history.BeginAsync(DateTimeOffset.UtcNow, "abc125", "machine", "/r", settings, CancellationToken.None);
        foreach (var (seconds, repetition) in new[] { (2.0, 1), (2.2, 2) })
            await history.AppendAsync(second, Run("TcpClient2", seconds, repetition), CancellationToken.None);
        await history.FinishAsync(second, new Dictionary<string, string> { ["Cores"] = "2" }, settings, DateTimeOffset.UtcNow, CancellationToken.None);

        var entries = await history.ListAsync(CancellationToken.None);
        CollectionAssert.AreEqual(new[] { first, unlike, second }, entries.Select(e => e.Id).ToArray());
        Assert.IsTrue(entries.All(e => e.Status == HistoryEntry.Complete));
        // The one like it is the latest earlier one that measured the same key (2,000 records), not the one just before.
        Assert.AreEqual(first, await history.PreviousLikeAsync(second, CancellationToken.None));
        Assert.IsNull(await history.PreviousLikeAsync(first, CancellationToken.None));
        var loaded = await history.LoadAsync(second, CancellationToken.None);
        Assert.AreEqual("2", loaded.Environment["Cores"]);
        var row = Comparison.Compare(await history.LoadAsync(first, CancellationToken.None), loaded).Single();
        Assert.AreEqual(("TcpClient2", 2000, 1.1, 2.1), (row.Transport, row.Records, Math.Round(row.Before.Mean, 6), Math.Round(row.After.Mean, 6)));
        Assert.AreEqual(ErrorCodes.MissingBaseline, (await Assert.ThrowsExactlyAsync<IntegrationException>(() => history.LoadAsync(99, CancellationToken.None))).Code);
    }

    [TestMethod]
    [TestCategory("Unit")]
    public async Task A_database_of_another_schema_version_is_refused_with_IT5001_and_left_alone()
    {
        using var folder = new TempDirectory("it-history-");
        var history = ResultsHistory.Open("Sqlite", $"Data Source={Path.Combine(folder, "results.db")}");
        await history.EnsureSchemaAsync(CancellationToken.None);
        await using (var connection = await history.Database.OpenAsync(CancellationToken.None))
        await using (var command = connection.CreateCommand())
        {
            command.CommandText = "UPDATE it_history_meta SET value = '99' WHERE name = 'schema'";
            await command.ExecuteNonQueryAsync();
        }
        Assert.AreEqual(ErrorCodes.ResultsUnreadable, (await Assert.ThrowsExactlyAsync<IntegrationException>(() => history.ListAsync(CancellationToken.None))).Code);
    }

    [TestMethod]
    [TestCategory("Unit")]
    public async Task A_version_1_database_gains_the_hosts_columns_and_keeps_its_runs()
    {
        using var folder = new TempDirectory("it-history-");
        var history = ResultsHistory.Open("Sqlite", $"Data Source={Path.Combine(folder, "results.db")}");
        var id = await history.BeginAsync(DateTimeOffset.UtcNow, "abc123", "machine", "/r", new Dictionary<string, string>(), CancellationToken.None);
        await history.AppendAsync(id, Run("TcpClient2", 1.0, 1), CancellationToken.None);
        // Version 1 as it was: no hosts columns.
        await AsVersion1Async(history);
        var upgraded = ResultsHistory.Open("Sqlite", $"Data Source={Path.Combine(folder, "results.db")}");
        await upgraded.EnsureSchemaAsync(CancellationToken.None); // as the next RunAll begins
        await upgraded.AppendAsync(id, Run("TcpClient2", 1.1, 2) with { Hosts = "Two", HostCpus = "0/1" }, CancellationToken.None);
        Assert.AreEqual("2", await Scalar(upgraded, "SELECT value FROM it_history_meta WHERE name = 'schema'"));
        Assert.AreEqual("One|", await Scalar(upgraded, "SELECT key_hosts || '|' || key_host_cpus FROM it_run WHERE seq = 1"));
        Assert.AreEqual("Two|0/1", await Scalar(upgraded, "SELECT key_hosts || '|' || key_host_cpus FROM it_run WHERE seq = 2"));
        var keys = (await upgraded.LoadAsync(id, CancellationToken.None)).Measurements.Select(m => (m.Key.Hosts, m.Key.HostCpus)).ToArray();
        CollectionAssert.AreEqual(new[] { ("One", ""), ("Two", "0/1") }, keys);
    }

    [TestMethod]
    [TestCategory("Unit")]
    public async Task A_version_1_RunAll_on_two_hosts_reads_back_as_two_hosts()
    {
        using var folder = new TempDirectory("it-history-");
        var history = ResultsHistory.Open("Sqlite", $"Data Source={Path.Combine(folder, "results.db")}");
        var id = await history.BeginAsync(DateTimeOffset.UtcNow, "abc123", "machine", "/r", new Dictionary<string, string>(), CancellationToken.None);
        await history.AppendAsync(id, Run("TcpClient2", 1.0, 1), CancellationToken.None); // a line of before: no hosts in it
        await history.FinishAsync(id, new Dictionary<string, string> { ["Hosts"] = "Two" }, new Dictionary<string, string>(), DateTimeOffset.UtcNow, CancellationToken.None);
        await AsVersion1Async(history);
        var upgraded = ResultsHistory.Open("Sqlite", $"Data Source={Path.Combine(folder, "results.db")}");
        Assert.AreEqual("Two", (await upgraded.LoadAsync(id, CancellationToken.None)).Measurements.Single().Key.Hosts);
        Assert.AreEqual("Two", await Scalar(upgraded, "SELECT key_hosts FROM it_run"));
    }

    /// <summary>The database as version 1 made it: no hosts columns.</summary>
    private static async Task AsVersion1Async(ResultsHistory history) =>
        await Scalar(history, "ALTER TABLE it_run DROP COLUMN key_hosts; ALTER TABLE it_run DROP COLUMN key_host_cpus; UPDATE it_history_meta SET value = '1' WHERE name = 'schema'");

    private static async Task<string?> Scalar(ResultsHistory history, string sql)
    {
        await using var connection = await history.Database.OpenAsync(CancellationToken.None);
        await using var command = connection.CreateCommand();
        command.CommandText = sql;
        return Convert.ToString(await command.ExecuteScalarAsync(), System.Globalization.CultureInfo.InvariantCulture);
    }

    [TestMethod]
    [TestCategory("EndToEnd")]
    public void Two_RunAlls_in_a_row_are_compared_from_the_database_by_id()
    {
        using var artifacts = new TempDirectory("it-history-runall-");
        string[] plan = ["-p:Transports=TcpClient2+PipelinedCopy", "-p:RecordCounts=2000", "-p:Repetitions=2", "-p:Warmup=false", "-p:Peers=false"];
        for (var i = 0; i < 2; i++)
        {
            var (exitCode, output) = HostingTests.RunBuild("RunAll", artifacts, plan);
            Assert.AreEqual(0, exitCode, output);
            StringAssert.Contains(output, $"History: RunAll {i + 1} in ");
        }
        var history = ResultsHistory.Open("Sqlite", $"Data Source={Path.Combine(artifacts, "results.db")}");
        var entries = history.ListAsync(CancellationToken.None).GetAwaiter().GetResult();
        CollectionAssert.AreEqual(new long[] { 1, 2 }, entries.Select(e => e.Id).ToArray());
        CollectionAssert.AreEqual(new[] { 4, 4 }, entries.Select(e => e.Runs).ToArray());
        Assert.IsTrue(entries.All(e => e.Status == HistoryEntry.Complete));

        var (compareExit, compareOutput) = HostingTests.RunBuild("Compare", artifacts);
        Assert.AreEqual(0, compareExit, compareOutput);
        var compare = File.ReadAllText(Path.Combine(artifacts, "results", "compare.md"));
        StringAssert.StartsWith(compare.Split('\n')[2], "Before: RunAll 1 (");
        StringAssert.Contains(compare.Split('\n')[2], "After: RunAll 2 (");
        var rows = MarkdownTable.With(compare, "Before (s)").Rows;
        CollectionAssert.AreEquivalent(new[] { "TcpClient2", "PipelinedCopy" }, rows.Select(r => r[0]).ToArray());

        var (listExit, listOutput) = HostingTests.RunBuild("History", artifacts);
        Assert.AreEqual(0, listExit, listOutput);
        StringAssert.Contains(listOutput, "2 RunAll(s) in ");
        // Named ids, the other way round; one that does not exist is IT5002.
        var (namedExit, namedOutput) = HostingTests.RunBuild("Compare", artifacts, "-p:BaseRun=2", "-p:CurrentRun=1");
        Assert.AreEqual(0, namedExit, namedOutput);
        var (missingExit, missingOutput) = HostingTests.RunBuild("Compare", artifacts, "-p:BaseRun=7");
        Assert.AreNotEqual(0, missingExit);
        StringAssert.Contains(missingOutput, "error IT5002:");
    }
}
