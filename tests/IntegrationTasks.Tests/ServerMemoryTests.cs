using System.Buffers.Binary;

namespace IntegrationTasks.Tests;

/// <summary>What clients can make a server hold: the largest requests it accepts, or the largest rows, must not exhaust it.</summary>
[TestClass]
[TestCategory("EndToEnd")]
public sealed class ServerMemoryTests
{
    private const long MemoryGoal = 300L * 1024 * 1024;

    [TestMethod]
    [Timeout(300_000, CooperativeCancellation = true)]
    public async Task Eight_of_the_largest_requests_at_once_keep_a_TCP_server_under_300_MB()
    {
        using var artifacts = new TempDirectory("it-memory-");
        var (exitCode, output) = HostingTests.RunBuild("GenerateData", artifacts, "-p:Records=100");
        Assert.AreEqual(0, exitCode, output);
        var port = TestPorts.Free();
        // TCP 3: four answerers and eight pending requests per connection, the most any generation holds at once.
        using var server = HandStartedServer.Start("TcpTestServer3", artifacts, port);
        await server.Screen.WaitForAsync("Ctrl+C stops it.", TimeSpan.FromSeconds(60));

        // The largest request accepted: 100,000 IDs (MaxBatchRecords), padded with whitespace to just under MaxFrameBytes (64 MB).
        // Before: each frame was held whole and every reply built in one doubling array, eight at a time: 407 MB resident.
        var ids = Encoding.ASCII.GetBytes("<request>" + string.Concat(Enumerable.Repeat("<id>1</id>", 100_000)));
        var frame = new byte[12 + 64 * 1024 * 1024 - 1024];
        BinaryPrimitives.WriteInt64LittleEndian(frame, frame.Length - 12);
        ids.CopyTo(frame, 12);
        frame.AsSpan(12 + ids.Length).Fill((byte)' ');
        "</request>"u8.CopyTo(frame.AsSpan(frame.Length - 10));

        using var client = new TcpClient();
        await client.ConnectAsync(IPAddress.Loopback, port);
        var stream = client.GetStream();
        var sending = Task.Run(async () =>
        {
            for (var batch = 1; batch <= 8; batch++)
            {
                BinaryPrimitives.WriteInt32LittleEndian(frame.AsSpan(8), batch);
                await stream.WriteAsync(frame);
            }
            await stream.WriteAsync(new byte[12]);
        });

        var answered = new List<int>();
        var header = new byte[12];
        var reply = new byte[64 * 1024];
        while (true)
        {
            await stream.ReadExactlyAsync(header).AsTask().WaitAsync(TimeSpan.FromSeconds(120));
            var length = BinaryPrimitives.ReadInt64LittleEndian(header);
            if (length == 0)
                break;
            answered.Add(BinaryPrimitives.ReadInt32LittleEndian(header.AsSpan(8)));
            var records = 0;
            Array.Clear(reply, 0, 8);
            for (var left = length; left > 0;)
            {
                // The last 8 bytes of the previous read stay in front: a "</record>" split between two reads is still counted once.
                var read = await stream.ReadAsync(reply.AsMemory(8, (int)Math.Min(reply.Length - 8, left)));
                Assert.AreNotEqual(0, read, "The server closed the connection inside a reply.");
                records += CountRecordEnds(reply.AsSpan(0, 8 + read));
                reply.AsSpan(read, 8).CopyTo(reply);
                left -= read;
            }
            Assert.AreEqual(100_000, records, $"records in the reply to batch {answered[^1]}");
        }
        await sending;
        CollectionAssert.AreEquivalent(Enumerable.Range(1, 8).ToList(), answered);

        var peak = server.PeakResidentBytes();
        Assert.IsLessThan(MemoryGoal, peak, $"peak resident memory {peak / 1024 / 1024} MB");

        // The same eight again, and Ctrl+C while they are in flight: it stops anyway (a 63.9 MB request once kept it busy for
        // more than six minutes after SIGINT).
        using var again = new TcpClient();
        await again.ConnectAsync(IPAddress.Loopback, port);
        var inFlight = Task.Run(async () =>
        {
            try
            {
                for (var batch = 1; batch <= 8; batch++)
                    await again.GetStream().WriteAsync(frame);
            }
            catch (IOException)
            {
                // the server stopped under it
            }
        });
        await server.Screen.WaitForAsync("finished: 8 requests answered", TimeSpan.FromSeconds(60));
        await server.InterruptAsync();
        await server.Process.WaitForExitAsync().WaitAsync(TimeSpan.FromSeconds(60));
        Assert.AreEqual(0, server.Process.ExitCode, server.Screen.ToString());
        HostingTests.AssertPortFree(port);
        await inFlight.WaitAsync(TimeSpan.FromSeconds(30));
    }

    [TestMethod]
    public void Sixteen_clients_moving_megabyte_rows_keep_every_process_under_a_gigabyte()
    {
        using var artifacts = new TempDirectory("it-megabyte-");
        int port = TestPorts.Free(), soapPort = TestPorts.Free(), restPort = TestPorts.Free();
        // The frames with base64 XML, JSON over Kestrel, and SOAP's buffered envelopes (the most the servers held by hand): a batch of
        // one 1 MiB row each (BatchBytes), eight in flight for each of 16 clients.
        var (exitCode, output) = HostingTests.RunBuild("RunAll", artifacts, "-p:Transports=TcpClient2+RestJson+SoapSmallBatchesAsync",
            $"-p:Port={port}", $"-p:SoapPort={soapPort}", $"-p:RestPort={restPort}", "-p:PayloadBytes=1048576", "-p:RecordCounts=64", "-p:Clients=16",
            "-p:Repetitions=1", "-p:Warmup=false");
        Assert.AreEqual(0, exitCode, output);
        var runs = MeasurementLog.Read(Path.Combine(artifacts, "results", "runs.jsonl")).Where(r => r.Clients == 16).ToList();
        Assert.HasCount(3, runs);
        foreach (var run in runs)
        {
            Assert.AreEqual((1 << 20, 1, 64, true), (run.PayloadBytes, run.BatchSize, run.RowsMatched, run.Verified), run.Transport);
            Assert.IsLessThan(1L << 30, run.ClientPeakBytes, $"{run.Transport}'s client");
            Assert.IsLessThan(1L << 30, run.ServerPeakBytes!.Value, $"{run.Transport}'s server");
        }
        HostingTests.AssertEndedCleanly(artifacts);
    }

    private static int CountRecordEnds(ReadOnlySpan<byte> chunk)
    {
        var count = 0;
        for (var i = chunk.IndexOf("</record>"u8); i >= 0; i = chunk.IndexOf("</record>"u8))
        {
            count++;
            chunk = chunk[(i + 9)..];
        }
        return count;
    }
}
