namespace IntegrationTasks.Common;

/// <summary>
/// The defaults of the settings that the targets and the code both read, written once for the code: every task, host module and
/// class that has one takes it from here. MSBuild cannot read a C# constant, so targets/ states each too, and
/// <c>SettingDefaultsTests</c> checks every one equal and finds any literal written again in the code.
/// </summary>
public static class SettingDefaults
{
    /// <summary>The records a client asks for in one request.</summary>
    public const int BatchSize = 1000;

    /// <summary>The most records a server answers in one batch; more is refused with a coded error.</summary>
    public const int MaxBatchRecords = 100_000;

    /// <summary>How long a server waits on a silent connection before it drops it with a coded error.</summary>
    public const int ConnectionTimeoutSeconds = 120;

    /// <summary>The batches a client has asked for and not yet committed, at most.</summary>
    public const int MaxInFlight = 8;

    /// <summary>How often a client resumes after a broken connection before it gives up.</summary>
    public const int MaxReconnects = 5;

    /// <summary>The tasks a server answers its requests on.</summary>
    public const int Answerers = 4;

    /// <summary>How long a client run may take.</summary>
    public const int TimeoutSeconds = 1800;

    /// <summary>The relay's faults: after how many bytes from the server, and how long a Silence lasts.</summary>
    public const long FaultAfterBytes = 1_000_000;
    public const int SilenceSeconds = 5;

    /// <summary>The largest frame the TCP generations and the WebSocket transport read (64 MiB).</summary>
    public const int MaxFrameBytes = 64 * 1024 * 1024;

    /// <summary>The largest request body the HTTP transport's server reads (32 MiB).</summary>
    public const long MaxRequestBytes = 32L * 1024 * 1024;

    /// <summary>Where a server listens and where its clients connect.</summary>
    public const string BindAddress = "127.0.0.1";
    public const string HostName = "127.0.0.1";

    /// <summary>The warm-up runs before a transport's measured ones.</summary>
    public const int WarmupRuns = 3;

    /// <summary>How long a started server has to say it is ready, and to stop once asked.</summary>
    public const int ServerReadyTimeoutSeconds = 120;
    public const int ServerStopTimeoutSeconds = 30;

    /// <summary>The most payload one batch holds (1 MiB): with large rows a batch holds fewer than BatchSize records.</summary>
    public const long BatchBytes = 1024 * 1024;

    /// <summary>The most payload one RunAll run moves (1 GiB): with large rows its record counts are capped to it.</summary>
    public const long MaxRunBytes = 1024L * 1024 * 1024;

    /// <summary>Where a client run executes (<see cref="ClientProcessMode"/>), and the batches a Warmed process runs first.</summary>
    public const string ClientProcess = nameof(ClientProcessMode.Transport);
    public const int ClientWarmupBatches = 5;

    /// <summary>The private RabbitMQ node's AMQP port.</summary>
    public const int RabbitMQPort = 5673;

    /// <summary>Its AMQPS port (with Tls=true or false+true).</summary>
    public const int RabbitMQTlsPort = 5674;
}
