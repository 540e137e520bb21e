using System.Diagnostics;

namespace IntegrationTasks.Tests;

/// <summary>A server as a person starts it (<c>dotnet msbuild build.proj -t:TcpServer2</c>) and stops it (Ctrl+C).</summary>
[TestClass]
[TestCategory("EndToEnd")]
[DoNotParallelize]
public sealed class HandStartedServerTests
{
    /// <summary>The process's output, line by line, with a wait for a line that contains a text (and a timeout that names it).</summary>
    private sealed class Screen
    {
        private readonly List<string> _lines = [];
        private readonly List<(string Text, TaskCompletionSource<string> Seen)> _waits = [];

        public void Add(string? line)
        {
            if (line is null)
                return;
            lock (_lines)
            {
                _lines.Add(line);
                foreach (var wait in _waits.Where(w => line.Contains(w.Text, StringComparison.Ordinal)))
                    wait.Seen.TrySetResult(line);
            }
        }

        public async Task<string> WaitForAsync(string text, TimeSpan timeout)
        {
            var seen = new TaskCompletionSource<string>(TaskCreationOptions.RunContinuationsAsynchronously);
            lock (_lines)
            {
                if (_lines.FirstOrDefault(l => l.Contains(text, StringComparison.Ordinal)) is { } line)
                    return line;
                _waits.Add((text, seen));
            }
            try
            {
                return await seen.Task.WaitAsync(timeout);
            }
            catch (TimeoutException)
            {
                throw new TimeoutException($"No line with \"{text}\" within {timeout.TotalSeconds} s. The screen:\n{this}");
            }
        }

        public override string ToString() { lock (_lines) return string.Join("\n", _lines); }
    }

    [TestMethod]
    [Timeout(300_000, CooperativeCancellation = true)]
    public async Task A_server_started_by_hand_says_where_it_listens_shows_each_client_and_ends_with_0_on_Ctrl_C()
    {
        using var artifacts = new TempDirectory("it-by-hand-");
        var (exitCode, output) = HostingTests.RunBuild("GenerateData", artifacts, "-p:Records=500");
        Assert.AreEqual(0, exitCode, output);
        var port = TestPorts.Free();
        var info = new ProcessStartInfo("dotnet")
        {
            RedirectStandardOutput = true, RedirectStandardError = true, RedirectStandardInput = true, WorkingDirectory = RepositoryPaths.Root,
        };
        foreach (var argument in new[]
                 {
                     "msbuild", RepositoryPaths.BuildProject, "-t:TcpServer2", "-nologo", $"-p:Configuration={HostingTests.Configuration}",
                     "-p:SkipTasksBuild=true", $"-p:ArtifactsDir={artifacts}/", $"-p:Port={port}",
                 })
            info.ArgumentList.Add(argument);
        using var server = Process.Start(info)!;
        var screen = new Screen();
        server.OutputDataReceived += (_, e) => screen.Add(e.Data);
        server.ErrorDataReceived += (_, e) => screen.Add(e.Data);
        server.BeginOutputReadLine();
        server.BeginErrorReadLine();
        try
        {
            StringAssert.Contains(await screen.WaitForAsync("Ctrl+C stops it.", TimeSpan.FromSeconds(60)), $"TcpServer2 is serving tcp://127.0.0.1:{port}");
            (exitCode, output) = HostingTests.RunBuild("TcpClient2", artifacts, $"-p:Port={port}", "-p:Records=500", "-p:BatchSize=100");
            Assert.AreEqual(0, exitCode, output);
            StringAssert.Contains(await screen.WaitForAsync("finished: 5 requests answered", TimeSpan.FromSeconds(30)), "Connection from 127.0.0.1:");

            // Four of the largest requests it accepts (100,000 IDs each: ≈ 14 MB of reply apiece) in flight, then Ctrl+C: it stops anyway.
            using var heavy = new System.Net.Sockets.TcpClient();
            await heavy.ConnectAsync(System.Net.IPAddress.Loopback, port);
            var body = System.Text.Encoding.ASCII.GetBytes("<request>" + string.Concat(Enumerable.Repeat("<id>1</id>", 100_000)) + "</request>");
            var frame = new byte[8 + body.Length];
            System.Buffers.Binary.BinaryPrimitives.WriteInt64LittleEndian(frame, body.Length);
            body.CopyTo(frame, 8);
            for (var i = 0; i < 4; i++)
                await heavy.GetStream().WriteAsync(frame);

            // Ctrl+C: SIGINT to the build, as the terminal sends it.
            using (var kill = Process.Start("kill", ["-INT", server.Id.ToString(System.Globalization.CultureInfo.InvariantCulture)]))
                await kill.WaitForExitAsync();
            await server.WaitForExitAsync().WaitAsync(TimeSpan.FromSeconds(60));
            Assert.AreEqual(0, server.ExitCode, screen.ToString());
            StringAssert.Contains(screen.ToString(), "TcpServer2 stopped (Ctrl+C); exit code 0.");
            HostingTests.AssertPortFree(port);
        }
        finally
        {
            if (!server.HasExited)
                server.Kill(entireProcessTree: true);
        }
    }
}
