namespace IntegrationTasks.Tests;

[TestClass]
[TestCategory("EndToEnd")]
public sealed class TransferVerifierTests
{
    private const int Records = 200;

    private static async Task<TestDatabases> PreparedAsync(string provider = "Sqlite", bool clientWithoutKey = false)
    {
        var databases = await TestDatabases.CreateAsync(provider);
        await new DataGenerator(databases.Server, NullEventLog.Instance).GenerateAsync(Records, CancellationToken.None);
        if (clientWithoutKey)
            await databases.Client.ExecuteAsync("CREATE TABLE ClientTable (ClientTableID INTEGER, DescClientTable TEXT, Value REAL, CreationDate TEXT, StringField1 TEXT, StringField2 TEXT)");
        await databases.Client.EnsureSchemaAsync(CancellationToken.None);
        await using var writer = await RecordWriter.OpenAsync(databases.Client, RecordTable.Client, CancellationToken.None);
        await writer.InsertBatchAsync(Enumerable.Range(1, Records).Select(id => SampleData.Create(id)).ToList(), CancellationToken.None);
        return databases;
    }

    [TestMethod]
    [DataRow("Sqlite")]
    [DataRow("PostgreSql")]
    [DataRow("MariaDb")]
    public async Task An_exact_copy_passes(string provider)
    {
        await using var databases = await PreparedAsync(provider);
        var report = await new TransferVerifier(databases.Server, databases.Client).VerifyAsync(Records, CancellationToken.None);
        Assert.AreEqual(Records, report.Matched);
    }

    [TestMethod]
    public async Task After_a_failed_transfer_whole_batches_pass_and_a_partial_batch_is_named()
    {
        await using var databases = await PreparedAsync();
        var verifier = new TransferVerifier(databases.Server, databases.Client);
        // Batches of 50: the last two (IDs 101..200) never arrived, whole.
        await databases.Client.ExecuteAsync("DELETE FROM ClientTable WHERE ClientTableID > 100");
        var whole = await verifier.VerifyWholeBatchesAsync(Records, 50, CancellationToken.None);
        Assert.AreEqual((2, 0, 100), (whole.WholeBatches, whole.PartialBatches, whole.Matched));
        // Half of batch 2 (IDs 76..100) gone: a half-imported batch, which a commit per batch must never leave.
        await databases.Client.ExecuteAsync("DELETE FROM ClientTable WHERE ClientTableID > 75");
        var e = await Assert.ThrowsExactlyAsync<IntegrationException>(() => verifier.VerifyWholeBatchesAsync(Records, 50, CancellationToken.None));
        Assert.AreEqual(ErrorCodes.VerificationFailed, e.Code);
        StringAssert.Contains(e.Message, "1 partial (first: 2)");
    }

    [TestMethod]
    [DataRow("Sqlite")]
    [DataRow("PostgreSql")]
    [DataRow("MariaDb")]
    public async Task An_idempotent_import_skips_only_rows_already_there_and_a_failing_batch_leaves_nothing(string provider)
    {
        await using var databases = await TransferChecks.WithRecordsAsync(provider, Records);
        await databases.Client.EnsureSchemaAsync(CancellationToken.None);
        static List<ServiceRecord> Rows(int first, int last) => Enumerable.Range(first, last - first + 1).Select(id => SampleData.Create(id)).ToList();
        await using (var writer = await RecordWriter.OpenAsync(databases.Client, RecordTable.Client, CancellationToken.None, ignoreExisting: true))
        {
            await writer.InsertBatchAsync(Rows(1, 100), CancellationToken.None);
            // A batch seen again after a break: half of it committed before, and one ID twice in itself.
            await writer.InsertBatchAsync([.. Rows(51, 150), SampleData.Create(120)], CancellationToken.None);
            // Only a repeated ID is skipped: any other broken row fails the whole batch, and none of its rows stays behind.
            var broken = Rows(151, 200);
            broken[10] = broken[10] with { Desc = null! };
            var e = await Assert.ThrowsExactlyAsync<IntegrationException>(() => writer.InsertBatchAsync(broken, CancellationToken.None));
            Assert.AreEqual(ErrorCodes.DatabaseFailure, e.Code);
            Assert.AreEqual(150, await databases.Client.CountAsync(RecordTable.Client, CancellationToken.None));
            // The same writer goes on; nothing of the failed batch comes back with the next one.
            await writer.InsertBatchAsync(Rows(141, 200), CancellationToken.None);
        }
        var report = await new TransferVerifier(databases.Server, databases.Client).VerifyAsync(Records, CancellationToken.None);
        Assert.AreEqual((Records, 0, 0), (report.Matched, report.Duplicated, report.Extra));
    }

    [TestMethod]
    public async Task Missing_rows_are_counted_and_named()
    {
        await using var databases = await PreparedAsync();
        await databases.Client.ExecuteAsync("DELETE FROM ClientTable WHERE ClientTableID IN (1, 7, 200)");
        var report = await Verify(databases, ErrorCodes.VerificationFailed, "3 missing (first: 1, 7, 200)");
        Assert.AreEqual(3, report.Missing);
    }

    [TestMethod]
    public async Task Extra_rows_are_counted_and_named()
    {
        await using var databases = await PreparedAsync();
        await using (var writer = await RecordWriter.OpenAsync(databases.Client, RecordTable.Client, CancellationToken.None))
            await writer.InsertBatchAsync([SampleData.Create(201), SampleData.Create(-3)], CancellationToken.None);
        var report = await Verify(databases, ErrorCodes.VerificationFailed, "2 extra (first: -3, 201)");
        Assert.AreEqual(2, report.Extra);
    }

    [TestMethod]
    public async Task Duplicated_rows_are_counted_and_named()
    {
        await using var databases = await PreparedAsync(clientWithoutKey: true);
        await using (var writer = await RecordWriter.OpenAsync(databases.Client, RecordTable.Client, CancellationToken.None))
            await writer.InsertBatchAsync([SampleData.Create(5), SampleData.Create(5), SampleData.Create(9)], CancellationToken.None);
        var report = await Verify(databases, ErrorCodes.VerificationFailed, "3 duplicated (first: 5, 5, 9)");
        Assert.AreEqual(3, report.Duplicated);
    }

    [TestMethod]
    [DataRow("UPDATE ClientTable SET Value = Value + 1e-9 * abs(Value) WHERE ClientTableID = 11", "11 [Value]", DisplayName = "a double's last digits")]
    [DataRow("UPDATE ClientTable SET CreationDate = '2014-05-10 13:00:00' WHERE ClientTableID = 12", "12 [CreationDate]", DisplayName = "a timestamp")]
    [DataRow("UPDATE ClientTable SET StringField1 = CASE WHEN StringField1 IS NULL THEN '' ELSE NULL END WHERE ClientTableID = 13", "13 [StringField1]", DisplayName = "NULL against empty")]
    [DataRow("UPDATE ClientTable SET DescClientTable = DescClientTable || ' ' WHERE ClientTableID = 14", "14 [Desc]", DisplayName = "a trailing space")]
    public async Task Altered_values_are_counted_and_named(string sql, string expected)
    {
        await using var databases = await PreparedAsync();
        await databases.Client.ExecuteAsync(sql);
        var report = await Verify(databases, ErrorCodes.VerificationFailed, $"1 altered (first: {expected})");
        Assert.AreEqual(Records - 1, report.Matched);
    }

    [TestMethod]
    [DataRow("Sqlite")]
    [DataRow("PostgreSql")]
    [DataRow("MariaDb")]
    public async Task A_payload_is_compared_byte_for_byte(string provider)
    {
        await using var databases = await TestDatabases.CreateAsync(provider);
        var shape = new PayloadShape(5000, PayloadKind.Bytes);
        await new DataGenerator(databases.Server, NullEventLog.Instance) { Payload = shape }.GenerateAsync(Records, CancellationToken.None);
        await databases.Client.EnsureSchemaAsync(CancellationToken.None);
        var rows = Enumerable.Range(1, Records).Select(id => SamplePayload.Row(id, shape)).ToList();
        rows[16].Payload![4999] ^= 1; // one bit of row 17's last byte
        rows[17] = rows[17] with { Payload = rows[17].Payload![..4999] }; // row 18 one byte short
        rows[18] = rows[18] with { Payload = null, PayloadText = Convert.ToBase64String(rows[18].Payload!) }; // row 19 as text
        await using (var writer = await RecordWriter.OpenAsync(databases.Client, RecordTable.Client, CancellationToken.None))
            await writer.InsertBatchAsync(rows, CancellationToken.None);
        var report = await Verify(databases, ErrorCodes.VerificationFailed, "3 altered (first: 17 [Payload], 18 [Payload], 19 [Payload])");
        Assert.AreEqual(Records - 3, report.Matched);
    }

    [TestMethod]
    public async Task A_server_without_the_rows_is_a_setup_error()
    {
        await using var databases = await PreparedAsync();
        await Verify(databases, ErrorCodes.MissingServerRows, "GenerateData", records: Records + 1);
    }

    private static async Task<TransferVerifier.Report> Verify(TestDatabases databases, string code, string expected, int records = Records)
    {
        var verifier = new TransferVerifier(databases.Server, databases.Client);
        var e = await Assert.ThrowsExactlyAsync<IntegrationException>(() => verifier.VerifyAsync(records, CancellationToken.None));
        Assert.AreEqual(code, e.Code, e.Message);
        StringAssert.Contains(e.Message, expected);
        return code == ErrorCodes.VerificationFailed
            ? await verifier.CompareAsync(records, CancellationToken.None)
            : new TransferVerifier.Report();
    }
}
