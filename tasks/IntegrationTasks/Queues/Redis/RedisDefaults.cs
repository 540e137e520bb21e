namespace IntegrationTasks.Queues.Redis;

/// <summary>The Redis Streams transport's settings' defaults, each stated once more in targets/Queues/Redis.targets (checked equal).</summary>
public static class RedisDefaults
{
    public const int RedisPort = 6380;

    /// <summary>Its TLS listener's port (with Tls=true or false+true).</summary>
    public const int RedisTlsPort = 6381;

    /// <summary>When the append-only file is flushed to disk: everysec (a second of writes at risk on a crash of the machine) or always.</summary>
    public const string RedisAppendFsync = "everysec";

    public const int RedisMaxClients = 1000;

    /// <summary>
    /// The most memory redis-server holds (maxmemory, policy noeviction: past it a write is refused, never an entry dropped): twice
    /// the most payload a run moves by default (MaxRunBytes), so that no client can grow it until the machine runs out.
    /// </summary>
    public const long RedisMaxMemoryBytes = 2L * 1024 * 1024 * 1024;

    /// <summary>The suite's own server on this machine (RedisHostName and RedisPort by default).</summary>
    internal static string LocalEndpoint => $"127.0.0.1:{RedisPort}";
}
