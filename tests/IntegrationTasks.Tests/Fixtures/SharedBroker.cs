namespace IntegrationTasks.Tests;

/// <summary>What the shared brokers of the test run (RabbitMQ, NATS, Redis) do alike.</summary>
internal static class SharedBroker
{
    /// <summary>At the end of the run: stops the broker if a test started it, and deletes its folder.</summary>
    public static void StopIfStarted<TBroker>(Lazy<TBroker> broker, Func<TBroker, CancellationToken, Task> stop, Func<TBroker, string> directory)
        where TBroker : IDisposable
    {
        if (!broker.IsValueCreated)
            return;
        stop(broker.Value, CancellationToken.None).GetAwaiter().GetResult();
        broker.Value.Dispose();
        Directory.Delete(directory(broker.Value), recursive: true);
    }

    /// <summary>Runs one SQL statement on the database (a test's own set-up or damage).</summary>
    public static async Task ExecuteAsync(this Database database, string sql)
    {
        await using var connection = await database.OpenAsync(CancellationToken.None);
        await using var command = connection.CreateCommand();
        command.CommandText = sql;
        await command.ExecuteNonQueryAsync();
    }
}
