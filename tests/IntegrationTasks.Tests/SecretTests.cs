using System.Collections.Concurrent;
using Npgsql;

namespace IntegrationTasks.Tests;

/// <summary>A database password given to a run: in no process's command line, no log, no results file, no report, no history.</summary>
[TestClass]
[TestCategory("EndToEnd")]
public sealed class SecretTests
{
    [TestMethod]
    [Timeout(400_000, CooperativeCancellation = true)] // one small RunAll on PostgreSQL
    [System.Runtime.Versioning.UnsupportedOSPlatform("windows")]
    public async Task A_database_password_reaches_no_command_line_log_results_report_or_history()
    {
        await using var databases = await TestDatabases.PostgresAsync();
        var password = new NpgsqlConnectionStringBuilder(databases.Server.ConnectionString).Password;
        Assert.IsFalse(string.IsNullOrEmpty(password), "the test cluster signs in with a password");
        using var artifacts = new TempDirectory("it-secrets-");
        using var finished = new CancellationTokenSource();
        var commandLines = new ConcurrentDictionary<string, byte>();
        // Every process's command line, read as often as a server could be started: the servers of each kind (a build of its own,
        // the web host, a broker's server), the client processes and the build itself.
        var watching = Task.Run(async () =>
        {
            while (!finished.IsCancellationRequested)
            {
                foreach (var line in Processes.CommandLines().Where(l => l.Contains(password, StringComparison.Ordinal)))
                    commandLines.TryAdd(line.Replace(password, "***", StringComparison.Ordinal), 0);
                await Task.Delay(50);
            }
        });
        // As a person is told to pass them: in the environment, which only its owner reads.
        var (exitCode, stdout, stderr) = await Task.Run(() => RepositoryPaths.Run("dotnet",
            TestBuild.Arguments("RunAll", artifacts, "-v:n", "-p:Transports=TcpClient2+RestJson+NatsClient+PipelinedCopy", "-p:RecordCounts=1000",
                "-p:Repetitions=1", "-p:Warmup=false", "-p:ServerProvider=PostgreSql", "-p:ClientProvider=PostgreSql", "-p:History=true"),
            new Dictionary<string, string?> { ["ServerConnString"] = databases.Server.ConnectionString, ["ClientConnString"] = databases.Client.ConnectionString }));
        await finished.CancelAsync();
        await watching;

        Assert.AreEqual(0, exitCode, stdout + stderr);
        var runs = IntegrationTasks.Transfer.MeasurementLog.Read(Path.Combine(artifacts, "results", "runs.jsonl"));
        CollectionAssert.IsSubsetOf(new[] { "TcpClient2", "RestJson", "NatsClient" }, runs.Where(r => r.Verified).Select(r => r.Transport).ToArray());
        Assert.IsEmpty(commandLines.Keys, string.Join("\n", commandLines.Keys));
        Assert.DoesNotContain(password, stdout + stderr);
        var files = Directory.EnumerateFiles(artifacts, "*", SearchOption.AllDirectories).ToList();
        Assert.IsTrue(files.Any(f => f.EndsWith("results.db", StringComparison.Ordinal)) && files.Any(f => f.EndsWith("report.html", StringComparison.Ordinal)));
        // The servers' properties are kept for them (a server the KillServer fault restarts reads them again) in owner-only files alone.
        var kept = files.Where(f => f.EndsWith(".properties.rsp", StringComparison.Ordinal)).ToList();
        Assert.IsNotEmpty(kept);
        Assert.IsTrue(kept.All(f => File.GetUnixFileMode(f) == (UnixFileMode.UserRead | UnixFileMode.UserWrite)), string.Join(", ", kept));
        var holding = files.Except(kept).Where(f => File.ReadAllBytes(f).AsSpan().IndexOf(Encoding.UTF8.GetBytes(password)) >= 0).ToList();
        Assert.IsEmpty(holding, string.Join(", ", holding));
        HostingTests.AssertEndedCleanly(artifacts);
    }
}
