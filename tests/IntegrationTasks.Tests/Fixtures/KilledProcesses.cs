using TaskItem = Microsoft.Build.Utilities.TaskItem;

namespace IntegrationTasks.Tests;

/// <summary>Clients and servers as processes of their own (as RunAll and a person run them), so that a test can kill them outright.</summary>
internal static class KilledProcesses
{
    /// <summary>
    /// Runs a client target as a process and kills it (SIGKILL, its whole tree) once ten batches are in ClientTable; fails if it had
    /// already finished by then.
    /// </summary>
    public static async Task KillClientAfterTenBatchesAsync(string target, TestDatabases databases, int batches, int batchSize, params string[] properties)
    {
        using var artifacts = new TempDirectory("it-killed-client-");
        var info = new ProcessStartInfo("dotnet") { WorkingDirectory = RepositoryPaths.Root, RedirectStandardOutput = true, RedirectStandardError = true };
        foreach (var argument in TestBuild.Arguments(target, artifacts, [$"-p:ClientConnString={ServerLaunch.Escape(databases.Client.ConnectionString)}",
                     $"-p:TotalBatches={batches}", $"-p:BatchSize={batchSize}", .. properties]))
            info.ArgumentList.Add(argument);
        using (var killed = Process.Start(info)!)
        {
            _ = killed.StandardOutput.ReadToEndAsync();
            _ = killed.StandardError.ReadToEndAsync();
            await Eventually.WaitUntilAsync(async () => await databases.Client.CountAsync(RecordTable.Client, CancellationToken.None) >= 10 * batchSize, "ten batches committed by the client");
            killed.Kill(entireProcessTree: true);
            await killed.WaitForExitAsync();
        }
        Assert.IsLessThan(batches * batchSize, await databases.Client.CountAsync(RecordTable.Client, CancellationToken.None), "killed too late");
    }

    /// <summary>A server target started as a process (StartServer, as RunAll starts it), on the test's server database.</summary>
    public static StartServer StartServer(FakeBuildEngine engine, string target, TestDatabases databases, string artifacts, params (string Name, string Value)[] properties)
    {
        static TaskItem Property(string name, string value)
        {
            var item = new TaskItem(name);
            item.SetMetadata("Value", value);
            return item;
        }
        var start = new StartServer
        {
            BuildEngine = engine, Name = $"{target}-{Guid.NewGuid():N}", Project = RepositoryPaths.BuildProject, Target = target, ReadyTimeoutSeconds = 120,
            PropertiesFile = Path.Combine(artifacts, "logs", $"{target}.properties.rsp"),
            Properties =
            [
                Property("Configuration", HostingTests.Configuration), Property("ArtifactsDir", artifacts + "/"),
                Property("ServerConnString", databases.Server.ConnectionString), .. properties.Select(p => Property(p.Name, p.Value)),
            ],
        };
        Assert.IsTrue(start.Execute(), engine.Log);
        return start;
    }
}
