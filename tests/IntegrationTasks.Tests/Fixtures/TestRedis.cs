using StackExchange.Redis;

namespace IntegrationTasks.Tests;

/// <summary>
/// The suite's own redis-server for the Redis tests: started once (as StartRedis starts it) and stopped after the run. The test
/// command installs redis-server; without it these tests fail.
/// </summary>
internal static class TestRedis
{
    private static readonly Lazy<BrokerProcess<RedisServerOptions>> Server = new(() => Start(Directory.CreateTempSubdirectory("it-redis-").FullName));

    public static string Endpoint => Server.Value.Options.Endpoint;

    /// <summary>A server of the test's own (one it may stop and start again), on a free port.</summary>
    public static BrokerProcess<RedisServerOptions> Start(string directory, int? port = null, string appendFsync = RedisDefaults.RedisAppendFsync,
        int maxClients = RedisDefaults.RedisMaxClients, long maxMemoryBytes = RedisDefaults.RedisMaxMemoryBytes) =>
        RedisServerProcess.StartAsync(new RedisServerOptions
            {
                Directory = directory, Port = port ?? TestPorts.Free(), AppendFsync = appendFsync, MaxClients = maxClients, MaxMemoryBytes = maxMemoryBytes,
            }, log: null,
            TimeSpan.FromSeconds(60), CancellationToken.None).GetAwaiter().GetResult();

    public static void StopIfStarted() => SharedBroker.StopIfStarted(Server, (broker, token) => broker.StopAsync(token), broker => broker.Options.Directory);

    /// <summary>Deletes every key (the streams and their groups) so that tests do not see each other's entries.</summary>
    public static async Task FlushAsync(string? endpoint = null)
    {
        await using var connection = await ConnectionMultiplexer.ConnectAsync(new ConfigurationOptions { EndPoints = { endpoint ?? Endpoint }, AllowAdmin = true });
        await connection.GetServers()[0].FlushAllDatabasesAsync();
    }
}
