namespace IntegrationTasks.Common;

/// <summary>Where a client run executes, and what its process ran before the measured transfer (recorded with every run).</summary>
public enum ClientProcessMode
{
    /// <summary>Inside the build's own process, after whatever the build ran before it (the suite's way before clients had processes).</summary>
    Build,

    /// <summary>A process of its own, started for the run, that runs nothing before it.</summary>
    Fresh,

    /// <summary>A process of its own, started for the run, that first runs the same transport's short warm-up transfer, untimed.</summary>
    Warmed,

    /// <summary>One process for each transport, kept for the build: each of its runs follows the transport's earlier runs (its warm-up runs first).</summary>
    Transport,
}

/// <summary>
/// What this process is to the client run it executes: set once by the client host before it runs the task, read by the task when it
/// writes the run's figures. In the build's own process it stays <see cref="ClientProcessMode.Build"/>.
/// </summary>
public static class ClientProcessContext
{
    public static ClientProcessMode Mode { get; set; } = ClientProcessMode.Build;

    /// <summary>From the process's start to the start of the run's task (runtime start, loading, the request read); null in the build.</summary>
    public static double? StartSeconds { get; set; }

    /// <summary>The warm-up transfer's time, where one ran first (Warmed).</summary>
    public static double? WarmupSeconds { get; set; }

    /// <summary>The runs this process made before the current one (Transport: the same transport's; 0 otherwise); null in the build.</summary>
    public static int? RunsBefore { get; set; }
}
