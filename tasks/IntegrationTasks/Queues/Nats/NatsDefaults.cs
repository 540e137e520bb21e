namespace IntegrationTasks.Queues.Nats;

/// <summary>The NATS transports' settings' defaults, each stated once more in targets/Queues/Nats.targets (checked equal).</summary>
public static class NatsDefaults
{
    public const int NatsPort = 4223;

    /// <summary>nats-server's max_payload here: a 1 MiB batch carried as base64 XML is about 1.4 MB, over the server's own 1 MB.</summary>
    public const int NatsMaxPayloadBytes = 8 * 1024 * 1024;

    public const int NatsMaxConnections = 1000;

    /// <summary>The most disk JetStream's store takes (max_file_store): twice the most payload a run moves by default (MaxRunBytes).</summary>
    public const long NatsMaxStoreBytes = 2L * 1024 * 1024 * 1024;

    /// <summary>The suite's own server on this machine (NatsHostName and NatsPort by default).</summary>
    internal static string LocalUrl => $"nats://127.0.0.1:{NatsPort}";
}
