namespace IntegrationTasks.Tests;

/// <summary>
/// The suite's own RabbitMQ node for the queue tests: started once (as StartRabbitMQ does it) and
/// stopped after the run. The test command installs rabbitmq-server; without it these tests fail.
/// </summary>
internal static class TestBroker
{
    private static readonly Lazy<RabbitMqNode> Node = new(() =>
    {
        var options = new RabbitMqNodeOptions
        {
            Directory = Directory.CreateTempSubdirectory("it-rabbitmq-").FullName,
            AmqpPort = TestPorts.Free(), DistributionPort = TestPorts.Free(), EpmdPort = TestPorts.Free(),
        };
        return RabbitMqNode.StartAsync(options, log: null, TimeSpan.FromSeconds(120), CancellationToken.None).GetAwaiter().GetResult();
    });

    public static RabbitMqNodeOptions Options => Node.Value.Options;
    public static BrokerOptions Broker => new() { Port = Options.AmqpPort };

    /// <summary>The broker's connection limit (-1: none); a test that sets one puts -1 back.</summary>
    public static Task SetConnectionLimitAsync(int maxConnections) => Node.Value.SetConnectionLimitAsync(maxConnections, CancellationToken.None);

    public static void StopIfStarted() => SharedBroker.StopIfStarted(Node, (broker, token) => broker.StopAsync(token), broker => broker.Options.Directory);

    /// <summary>Empties the suite's queues (and their dead-letter queues) so tests do not see each other's messages.</summary>
    public static async Task PurgeAsync()
    {
        await using var connection = await Broker.ConnectAsync("test", CancellationToken.None);
        await using var channel = await connection.CreateChannelAsync();
        foreach (var topology in new[] { QueueTopology.Fast, QueueTopology.Reliable })
        {
            // The reply queues of the clients of many-client runs too (the first keeps the series' name).
            foreach (var queue in new[] { topology.RequestQueue }.Concat(Enumerable.Range(0, 8).Select(k => topology.ForClient(k).ReplyQueue)))
            {
                await topology.DeclareAsync(channel, queue, CancellationToken.None);
                await channel.QueuePurgeAsync(queue);
                await channel.QueuePurgeAsync(QueueTopology.DeadLetterQueue(queue));
            }
        }
    }

    public static async Task<uint> CountAsync(string queue)
    {
        await using var connection = await Broker.ConnectAsync("test", CancellationToken.None);
        await using var channel = await connection.CreateChannelAsync();
        return (await channel.QueueDeclarePassiveAsync(queue)).MessageCount;
    }
}
