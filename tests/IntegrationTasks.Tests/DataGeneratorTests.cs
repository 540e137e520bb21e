namespace IntegrationTasks.Tests;

[TestClass]
[TestCategory("EndToEnd")]
public sealed class DataGeneratorTests
{
    [TestMethod]
    [DataRow("Sqlite")]
    [DataRow("PostgreSql")]
    [DataRow("MariaDb")]
    public async Task Generation_tops_up_and_never_redoes_rows(string provider)
    {
        await using var databases = await TestDatabases.CreateAsync(provider);
        var generator = new DataGenerator(databases.Server, NullEventLog.Instance) { ChunkSize = 97 };

        Assert.AreEqual(300, (await generator.GenerateAsync(300, CancellationToken.None)).Inserted);
        Assert.AreEqual(0, (await generator.GenerateAsync(300, CancellationToken.None)).Inserted);
        Assert.AreEqual(0, (await generator.GenerateAsync(200, CancellationToken.None)).Inserted);
        Assert.AreEqual(200, (await generator.GenerateAsync(500, CancellationToken.None)).Inserted);
        Assert.AreEqual(500, await databases.Server.CountAsync(RecordTable.Service, CancellationToken.None));

        // Every row is what one-shot generation would have written, read back through the provider.
        var id = 0;
        await foreach (var row in RecordReader.ReadOrderedAsync(databases.Server, RecordTable.Service, null, null, CancellationToken.None))
        {
            id++;
            Assert.IsTrue(SampleData.Create(id).SameValuesAs(row), $"{provider} changed row {id}: {SampleData.Create(id)} → {row}");
        }
        Assert.AreEqual(500, id);
    }

    [TestMethod]
    public async Task Generation_on_PostgreSQL_leaves_ServiceTable_vacuumed_and_analysed_so_autovacuum_does_not_start_during_the_runs()
    {
        // Otherwise autovacuum visits the freshly filled table later, during the first transports' runs.
        await using var databases = await TestDatabases.CreateAsync("PostgreSql");
        var log = new CapturingLog();
        await new DataGenerator(databases.Server, log).GenerateAsync(300, CancellationToken.None);
        StringAssert.Contains(string.Join("\n", log.Lines), "Settled ServiceTable in ");
        await using var connection = await databases.Server.OpenAsync(CancellationToken.None);
        await using var command = connection.CreateCommand();
        command.CommandText = "SELECT last_vacuum IS NOT NULL AND last_analyze IS NOT NULL FROM pg_stat_user_tables WHERE relname = 'servicetable'";
        Assert.IsTrue((bool)(await command.ExecuteScalarAsync())!, "ServiceTable vacuumed and analysed by the generation");
    }

    [TestMethod]
    [DataRow("Sqlite")]
    [DataRow("PostgreSql")]
    [DataRow("MariaDb")]
    public async Task Payloads_are_stored_exactly_and_another_payload_regenerates_the_table(string provider)
    {
        await using var databases = await TestDatabases.CreateAsync(provider);
        // A table of the series' six columns, made before payloads existed, with a row in it: it gains the payload columns.
        await databases.Server.ExecuteAsync(provider == "PostgreSql"
            ? "CREATE TABLE ServiceTable (ServiceTableID integer NOT NULL PRIMARY KEY, DescServiceTable varchar(200) NOT NULL, Value double precision NOT NULL, CreationDate timestamp(6) NOT NULL, StringField1 varchar(200), StringField2 varchar(200))"
            : "CREATE TABLE ServiceTable (ServiceTableID INTEGER NOT NULL PRIMARY KEY, DescServiceTable VARCHAR(200) NOT NULL, Value REAL NOT NULL, CreationDate TEXT NOT NULL, StringField1 VARCHAR(200), StringField2 VARCHAR(200))");
        await new DataGenerator(databases.Server, NullEventLog.Instance).GenerateAsync(1, CancellationToken.None);
        await databases.Server.ExecuteAsync("DELETE FROM ServiceTable");
        await new DataGenerator(databases.Server, NullEventLog.Instance).GenerateAsync(30, CancellationToken.None);

        (PayloadShape Shape, int Inserted, bool Emptied)[] steps =
        [
            (new(70_000, PayloadKind.Bytes), 40, true), (new(70_000, PayloadKind.Text), 40, true), (new(70_000, PayloadKind.Text), 0, false),
            (new(60_000, PayloadKind.Text), 40, true), (PayloadShape.None, 40, true),
        ];
        foreach (var (shape, inserted, emptied) in steps)
        {
            // Chunks of 100 KB: the rows go in by bytes, not only by count.
            var outcome = await new DataGenerator(databases.Server, NullEventLog.Instance) { Payload = shape, ChunkBytes = 100_000 }.GenerateAsync(40, CancellationToken.None);
            Assert.AreEqual((inserted, emptied), (outcome.Inserted, outcome.Emptied), $"{shape}");
            var id = 0;
            await foreach (var row in RecordReader.ReadOrderedAsync(databases.Server, RecordTable.Service, null, null, CancellationToken.None))
            {
                id++;
                Assert.IsTrue(SamplePayload.Row(id, shape).SameValuesAs(row), $"{provider}, {shape}: row {id} came back with {PayloadShape.Of(row)}");
                Assert.AreEqual(shape, PayloadShape.Of(row));
            }
            Assert.AreEqual(40, id);
        }
    }

    [TestMethod]
    public async Task Generation_fills_gaps()
    {
        await using var databases = TestDatabases.Sqlite();
        var generator = new DataGenerator(databases.Server, NullEventLog.Instance);
        await generator.GenerateAsync(100, CancellationToken.None);
        await using (var connection = await databases.Server.OpenAsync(CancellationToken.None))
        await using (var command = connection.CreateCommand())
        {
            command.CommandText = "DELETE FROM ServiceTable WHERE ServiceTableID IN (1, 50, 51, 100)";
            await command.ExecuteNonQueryAsync();
        }
        Assert.AreEqual(4, (await generator.GenerateAsync(100, CancellationToken.None)).Inserted);
        var report = await new TransferVerifier(databases.Server, databases.Server).CompareAsync(100, CancellationToken.None);
        Assert.AreEqual(100, await databases.Server.CountAsync(RecordTable.Service, CancellationToken.None), report.Describe());
    }

    [TestMethod]
    public async Task Bad_record_counts_are_refused()
    {
        await using var databases = TestDatabases.Sqlite();
        var e = await Assert.ThrowsExactlyAsync<IntegrationException>(
            () => new DataGenerator(databases.Server, NullEventLog.Instance).GenerateAsync(0, CancellationToken.None));
        Assert.AreEqual(ErrorCodes.InvalidParameter, e.Code);
    }
}
