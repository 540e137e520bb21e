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

    /// <summary>The suite's own server on this machine (RedisHostName and RedisPort by default).</summary>
    internal static string LocalEndpoint => $"127.0.0.1:{RedisPort}";
}
