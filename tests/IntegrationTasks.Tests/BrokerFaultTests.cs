namespace IntegrationTasks.Tests;

/// <summary>The relay's faults under RunAll for the brokers after RabbitMQ (whose own are in QueueTests): NATS core, JetStream, Redis Streams.</summary>
[TestClass]
[TestCategory("EndToEnd")]
public sealed class BrokerFaultTests
{
    [TestMethod]
    [DataRow("Reset")]
    [DataRow("KillServer")]
    public void Under_RunAll_faults_the_NATS_and_Redis_transports_end_with_every_row_once(string fault)
    {
        using var artifacts = new TempDirectory("it-broker-fault-");
        var (exitCode, output) = HostingTests.RunBuild("RunAll", artifacts, $"-p:Fault={fault}", "-p:FaultAfterBytes=400000", "-p:Transports=NatsClient+NatsJetStream+RedisStreams",
            "-p:RecordCounts=5000", "-p:Repetitions=1", "-p:Warmup=false", "-p:BatchSize=100", "-p:Peers=false");
        Assert.AreEqual(0, exitCode, output);
        var runs = MeasurementLog.Read(Path.Combine(artifacts, "results", "runs.jsonl"));
        Assert.HasCount(3, runs);
        Assert.IsTrue(runs.All(r => r is { FaultInjected: true, ThroughRelay: true, Completed: true, RowsMatched: 5000, RowsDuplicated: 0 } && r.Fault == fault),
            string.Join("\n", runs));
        // A reset connection is resumed by each. A killed server: JetStream's and Redis's requests wait in their stream for the
        // server started again, and their clients see no break; core NATS loses the requests the server had in hand (at most
        // once), and its client asks again on a new connection — unless the server had none in hand (requests meanwhile are sent
        // again until one answers).
        foreach (var run in runs)
        {
            // The broker, metered by the client over the transfer: read (its CPU comes in 10 ms ticks: a small run may read 0), held
            // memory, and the durable ones wrote to storage.
            Assert.IsGreaterThanOrEqualTo(0.0, run.BrokerCpuSeconds!.Value, run.ToString());
            Assert.IsGreaterThan(0L, run.BrokerPeakBytes ?? 0, run.ToString());
            if (run.Transport is "NatsJetStream" or "RedisStreams")
                Assert.IsGreaterThan(0L, run.BrokerStorageWriteBytes ?? 0, run.ToString());
            if (fault == "Reset")
                Assert.AreEqual(1, run.Reconnects, run.ToString());
            else if (run.Transport is "NatsJetStream" or "RedisStreams")
                Assert.AreEqual(0, run.Reconnects, run.ToString());
            else
                Assert.IsLessThanOrEqualTo(1, run.Reconnects ?? 0, run.ToString());
        }
        Assert.DoesNotContain("IT9999", output);
        HostingTests.AssertEndedCleanly(artifacts);
    }

    [TestMethod]
    public void Under_RunAll_each_durable_transport_rides_out_its_broker_restarted_mid_run()
    {
        using var artifacts = new TempDirectory("it-broker-restart-");
        var (exitCode, output) = HostingTests.RunBuild("RunAll", artifacts, "-p:Fault=RestartBroker", "-p:FaultAfterBytes=400000",
            "-p:Transports=NatsJetStream+RedisStreams+RabbitMQDurable+Amqp10Durable+NatsClient", "-p:RecordCounts=5000", "-p:Repetitions=1", "-p:Warmup=false",
            "-p:BatchSize=100", "-p:Peers=false");
        Assert.AreEqual(0, exitCode, output);
        var runs = MeasurementLog.Read(Path.Combine(artifacts, "results", "runs.jsonl"));
        // The references run through no broker and no relay; each queue transport's runs had its broker stopped and started again.
        var brokered = runs.Where(r => r.Transport is not ("PipelinedCopy" or "DirectCopy")).ToList();
        Assert.HasCount(5, brokered, string.Join("\n", runs));
        Assert.IsTrue(brokered.All(r => r is { Fault: "RestartBroker", FaultInjected: true, Completed: true, RowsMatched: 5000, RowsDuplicated: 0 }),
            string.Join("\n", brokered));
        // The broker closed every connection as it stopped: each client resumed on a new one.
        Assert.IsTrue(brokered.All(r => r.Reconnects >= 1), string.Join("\n", brokered));
        // Started again once a run: the broker's log says so, and the build's run after waited for it.
        foreach (var (log, restarts) in new[] { ("nats/nats-server.log", 2), ("redis/redis-server.log", 1), ("rabbitmq/console.log", 2) })
            Assert.AreEqual(restarts, Regex.Count(File.ReadAllText(Path.Combine(artifacts, log)), ErrorCodes.ServerRestarted), log);
        Assert.DoesNotContain("IT9999", output);
        HostingTests.AssertEndedCleanly(artifacts);
    }
}
