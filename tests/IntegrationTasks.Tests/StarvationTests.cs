namespace IntegrationTasks.Tests;

[TestClass]
public sealed class StarvationTests
{
    private const string HeyText = """

        Summary:
          Total:	27.2940 secs
          Slowest:	5.1772 secs
          Fastest:	0.5020 secs
          Average:	2.6085 secs
          Requests/sec:	36.6380

          Total data:	0 bytes

        Latency distribution:
          10% in 0.5100 secs
          50% in 2.5000 secs
          90% in 4.9000 secs
          99% in 5.1000 secs

        Status code distribution:
          [200]	1000 responses

        """;

    [TestMethod]
    [TestCategory("Unit")]
    public void Heys_summary_is_read_as_numbers()
    {
        var load = HeyOutput.Parse(HeyText);
        Assert.AreEqual(27.294, load.TotalSeconds, 1e-9);
        Assert.AreEqual(36.638, load.RequestsPerSecond, 1e-9);
        Assert.AreEqual(2.6085, load.AverageSeconds, 1e-9);
        Assert.AreEqual(0.502, load.FastestSeconds, 1e-9);
        Assert.AreEqual(5.1772, load.SlowestSeconds, 1e-9);
        Assert.AreEqual(2.5, load.Percentiles[50], 1e-9);
        Assert.AreEqual(5.1, load.Percentiles[99], 1e-9);
        Assert.AreEqual(1000, load.StatusCodes[200]);
    }

    [TestMethod]
    [TestCategory("Unit")]
    public void A_cut_short_load_run_is_a_coded_error()
    {
        var e = Assert.ThrowsExactly<IntegrationException>(() => HeyOutput.Parse("Error: connection refused"));
        Assert.AreEqual(ErrorCodes.InvalidFieldValue, e.Code);
    }

    [TestMethod]
    [TestCategory("Unit")]
    public void The_report_puts_each_run_beside_its_limit_and_the_article()
    {
        var run = new StarvationRun("sync", "/starvation/sync", 0, 100, 1000, HeyOutput.Parse(HeyText),
            [new CounterSample(1, 20, 74, 55, 232), new CounterSample(2, 36, 60, 50, 240)], 36.638);
        var markdown = StarvationReport.Document([run]).Markdown();
        var row = MarkdownTable.With(markdown, "Scenario").Row("sync");
        Assert.AreEqual(("1,000", "100", "36.6", "200", "18%", "2.608"),
            (row["Requests"], row["Concurrency"], row["Req/s"], row["Limit (c ÷ 0.5 s)"], row["Of the limit"], row["Average (s)"]));
        Assert.AreEqual(("2.500", "4.900", "5.100", "5.177", "36", "74", "240", "36.6"), (row["p50 (s)"], row["p90 (s)"], row["p99 (s)"],
            row["Slowest (s)"], row["Threads (max)"], row["Queue (max)"], row["Working set (MB, max)"], row["Article req/s"]));
        var html = StarvationReport.Document([run]).Html(charts: IntegrationTasks.Exporters.SvgCharts.Instance);
        StringAssert.Contains(html, "<svg id=\"starvation-threads\"");
        StringAssert.Contains(html, "<svg id=\"starvation-queue\"");
    }

    [TestMethod]
    [TestCategory("EndToEnd")]
    public void A_small_load_run_against_the_real_app_and_PostgreSQL_is_measured_and_counted()
    {
        using var results = new TempDirectory("it-starvation-");
        var engine = new FakeBuildEngine();
        var task = new ThreadPoolStarvationTask
        {
            BuildEngine = engine, PgConnString = DatabaseServer.Postgres.AdminConnectionString, HostAssembly = RunningHttpServer.HostAssembly,
            WorkDirectory = Path.Combine(results, "work"), ResultsDirectory = results, Port = TestPorts.Free(),
            Concurrency = 8, Requests = 24, RaisedMinThreads = 16,
        };
        Assert.IsTrue(task.Execute(), engine.Log);
        var runs = StarvationReport.Load(results)!;
        Assert.HasCount(3, runs);
        foreach (var run in runs)
        {
            Assert.AreEqual(24, run.Load.StatusCodes.GetValueOrDefault(200), $"{run.Scenario}: every request answered 200");
            Assert.IsGreaterThanOrEqualTo(0.5, run.Load.FastestSeconds, $"{run.Scenario}: each request waited 500 ms in PostgreSQL");
            Assert.IsNotEmpty(run.Counters, $"{run.Scenario}: the app sampled its counters");
        }
    }

    [TestMethod]
    [TestCategory("Unit")]
    public void A_short_run_with_fewer_requests_than_percentiles_parses()
    {
        // hey -n 4: it pads the latency distribution with "0% in 0.0000 secs" lines.
        var load = HeyOutput.Parse("""
            Summary:
              Total:	0.1087 secs
              Slowest:	0.1071 secs
              Fastest:	0.0014 secs
              Average:	0.0542 secs
              Requests/sec:	36.8109

            Latency distribution:
              10% in 0.0017 secs
              25% in 0.1067 secs
              50% in 0.1071 secs
              0% in 0.0000 secs
              0% in 0.0000 secs

            Status code distribution:
              [200]	4 responses
            """);
        Assert.AreEqual(3, load.Percentiles.Count);
        Assert.AreEqual(0.1071, load.Percentiles[50]);
        Assert.IsFalse(load.Percentiles.ContainsKey(0));
        Assert.AreEqual(4, load.StatusCodes[200]);
    }

    [TestMethod]
    [TestCategory("EndToEnd")]
    public async Task The_lab_target_stops_the_PostgreSQL_cluster_it_started_and_leaves_one_it_found_running()
    {
        // The suite's cluster runs (the test command started it): the target uses it and leaves it running.
        var connection = DatabaseServer.Postgres.AdminConnectionString;
        var (exitCode, output) = RunLab(new Dictionary<string, string?>());
        Assert.AreEqual(0, exitCode, output);
        await using (var dataSource = Npgsql.NpgsqlDataSource.Create(connection))
        await using (var open = await dataSource.OpenConnectionAsync())
            Assert.AreEqual(1, await new Npgsql.NpgsqlCommand("SELECT 1", open).ExecuteScalarAsync());

        // No cluster at this directory and port: the target starts one, and must stop it again.
        var directory = $"/tmp/it-pg-{Guid.NewGuid():N}";
        var environment = new Dictionary<string, string?> { ["IT_PG_DIR"] = directory, ["IT_PG_PORT"] = TestPorts.Free().ToString() };
        try
        {
            (exitCode, output) = RunLab(environment);
            Assert.AreEqual(0, exitCode, output);
            Assert.IsFalse(Processes.AllCommandLines().Contains(directory, StringComparison.Ordinal), "the cluster the target started is still running");
            StringAssert.Contains(output, $"Stopped the PostgreSQL cluster ({directory})");
        }
        finally
        {
            RepositoryPaths.Run("bash", [Path.Combine(RepositoryPaths.Root, "scripts/postgres.sh"), "stop"], environment);
            if (Directory.Exists(directory))
                Directory.Delete(directory, recursive: true);
        }
    }

    private static (int ExitCode, string Output) RunLab(Dictionary<string, string?> environment)
    {
        using var artifacts = new TempDirectory("it-starvation-target-");
        var (exitCode, stdout, stderr) = RepositoryPaths.Run("dotnet", TestBuild.Arguments("ThreadPoolStarvation", artifacts, "-v:n",
            "-p:StarvationRequests=4", "-p:StarvationConcurrency=2", "-p:StarvationMinThreads=4"), environment);
        return (exitCode, stdout + stderr);
    }
}
