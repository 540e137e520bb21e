namespace IntegrationTasks.Tests;

/// <summary>Every field of a run's key reaches every file a user reads: runs.jsonl, results.json, results.csv, failures, not-run rows, Compare.</summary>
[TestClass]
[TestCategory("Unit")]
public sealed class RunKeyTests
{
    /// <summary>The key's fields as the type declares them (its record's parameters), camel-cased as the files name them.</summary>
    private static readonly string[] KeyFields = [.. typeof(RunKey).GetConstructors().Single().GetParameters()
        .Select(p => JsonNamingPolicy.CamelCase.ConvertName(p.Name!))];

    private string _folder = "";

    [TestInitialize]
    public void Create() => _folder = Directory.CreateTempSubdirectory("it-runkey-").FullName;

    [TestCleanup]
    public void Remove() => Directory.Delete(_folder, recursive: true);

    private static Measurement Run(int clients, int repetition, double seconds) => new()
    {
        Transport = "TcpClient2", Kind = RunKind.Transport, Provider = "Sqlite", Records = 16_000, BatchSize = 1000, Clients = clients,
        Repetition = repetition, ElapsedSeconds = seconds, Verified = true, ServerWork = "PerRecord",
    };

    private static List<Measurement> OneAndSixteenClients(double sixteen = 1.5) =>
        [.. Enumerable.Range(1, 3).SelectMany(r => new[] { Run(1, r, 1.0 + r / 100.0), Run(16, r, sixteen + r / 100.0) })];

    [TestMethod]
    public void The_key_s_table_fields_are_its_declared_fields()
    {
        CollectionAssert.AreEqual(KeyFields, RunKey.Fields.Select(f => f.Id).ToArray());
        Assert.IsGreaterThanOrEqualTo(14, KeyFields.Length);
    }

    [TestMethod]
    public void One_client_and_sixteen_clients_are_two_rows_of_results_csv_and_json_each_with_every_key_field()
    {
        var failure = new FailedEntry("GrpcClient", 16_000, "IT4001", "Port 8085 on 127.0.0.1 is already in use.")
            { Key = RunKey.FromProperties(new Dictionary<string, string> { ["Transport"] = "GrpcClient", ["Records"] = "16000", ["Clients"] = "16" })! };
        var notRun = new NotRunEntry("MSMQ", "Windows only.", "", "836.12", "RabbitMQDurable");
        ReportFiles.Write(_folder, OneAndSixteenClients(), new Dictionary<string, string>(), new ReportOptions { Failed = [failure], NotRun = [notRun] });

        var csv = File.ReadAllLines(Path.Combine(_folder, "results.csv")).Select(l => l.Split(',')).ToList();
        var header = csv[0];
        foreach (var field in KeyFields)
            CollectionAssert.Contains(header, field, "results.csv");
        string Cell(string[] row, string id) => row[Array.IndexOf(header, id)];
        var measured = csv.Skip(1).Where(r => Cell(r, "status") == "measured").ToList();
        CollectionAssert.AreEquivalent(new[] { "1", "16" }, measured.Select(r => Cell(r, "clients")).Distinct().ToArray());
        Assert.AreEqual(("16", "GrpcClient", "16000", "Transport", "Loopback", "None"),
            csv.Skip(1).Where(r => Cell(r, "status") == "failed").Select(r => (Cell(r, "clients"), Cell(r, "transport"), Cell(r, "records"), Cell(r, "kind"), Cell(r, "network"), Cell(r, "fault"))).Single());
        Assert.AreEqual(("MSMQ", "", "1"), csv.Skip(1).Where(r => Cell(r, "status") == "not run").Select(r => (Cell(r, "transport"), Cell(r, "records"), Cell(r, "clients"))).Single());

        using var json = JsonDocument.Parse(File.ReadAllText(Path.Combine(_folder, "results.json")));
        var root = json.RootElement;
        var keys = new[]
        {
            root.GetProperty("measurements")[0].GetProperty("key"), root.GetProperty("summaries")[0].GetProperty("runKey"),
            root.GetProperty("failed")[0].GetProperty("key"), root.GetProperty("notRun")[0].GetProperty("key"),
        };
        foreach (var key in keys)
            foreach (var field in KeyFields)
                Assert.IsTrue(key.TryGetProperty(field, out _), $"{field} in {key}");
        var summaries = root.GetProperty("summaries").EnumerateArray().ToList();
        CollectionAssert.AreEquivalent(new[] { 1, 16 }, summaries.Select(s => s.GetProperty("runKey").GetProperty("clients").GetInt32()).ToArray());
    }

    [TestMethod]
    public void The_results_log_and_the_failure_log_carry_every_key_field()
    {
        var log = Path.Combine(_folder, "runs.jsonl");
        MeasurementLog.Append(log, Run(16, 1, 1.0) with { ThroughRelay = true, Network = "Wan", LatencyMs = 40, Fault = "Reset" });
        using (var line = JsonDocument.Parse(File.ReadLines(log).Single()))
        {
            foreach (var field in KeyFields)
                Assert.IsTrue(line.RootElement.GetProperty("key").TryGetProperty(field, out _), field);
            Assert.AreEqual(("Wan", 40.0, "Reset"), (line.RootElement.GetProperty("key").GetProperty("network").GetString(),
                line.RootElement.GetProperty("key").GetProperty("latencyMs").GetDouble(), line.RootElement.GetProperty("key").GetProperty("fault").GetString()));
        }
        // Read back, the key is made from the run's fields again (it is never read from the file).
        Assert.AreEqual(16, MeasurementLog.Read(log).Single().Key.Clients);

        var failures = Path.Combine(_folder, "failures.jsonl");
        RunFailures.Append(new Dictionary<string, string>
        {
            ["RunFailureLog"] = failures, ["Transport"] = "TcpClient2", ["Records"] = "16000", ["clients"] = "16", ["RunKind"] = "Transport",
            ["PayloadBytes"] = "1024", ["PayloadKind"] = "Text", ["Relayed"] = "true", ["Network"] = "Lan2014", ["Fault"] = "Silence",
        }, "IT3003", "the server went silent");
        using var failure = JsonDocument.Parse(File.ReadLines(failures).Single());
        foreach (var field in KeyFields)
            Assert.IsTrue(failure.RootElement.GetProperty("key").TryGetProperty(field, out _), field);
        Assert.AreEqual(new RunKey("TcpClient2", RunKind.Transport, 16_000, 1000, 1024, "Text", 16, 1, null, "PerRecord", "Sqlite", "Lan2014", null, "Silence"),
            RunFailures.Read(failures).Single().Key);
    }

    [TestMethod]
    public void Compare_names_every_key_field_and_keeps_one_and_sixteen_clients_apart()
    {
        var before = Path.Combine(_folder, "before");
        var after = Path.Combine(_folder, "after");
        ReportFiles.Write(before, OneAndSixteenClients(), new Dictionary<string, string>());
        ReportFiles.Write(after, OneAndSixteenClients(sixteen: 2.5), new Dictionary<string, string>());
        var rows = Comparison.Compare(ResultsFile.Load(Path.Combine(before, "results.json")), ResultsFile.Load(Path.Combine(after, "results.json")));
        var table = MarkdownTable.With(ComparisonMarkdown.Of(rows, [], 10), "Verdict");
        foreach (var field in KeyFields)
            CollectionAssert.Contains(table.Headers.ToArray(), field, "Compare");
        Assert.AreEqual(2, table.Rows.Count);
        var sixteen = table.Rows.Single(r => r[Array.IndexOf(table.Headers.ToArray(), "clients")] == "16");
        Assert.AreEqual("+65.8%", sixteen[Array.IndexOf(table.Headers.ToArray(), "Change")]);
    }
}
