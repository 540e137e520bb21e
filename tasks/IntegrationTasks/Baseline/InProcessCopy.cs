using IntegrationTasks.Data;
using IntegrationTasks.Transfer;

namespace IntegrationTasks.Baseline;

/// <summary>The references' shared settings: they read the server's database themselves, in the client task's process.</summary>
public abstract class InProcessCopy : TransferClientTask
{
    public string ServerProvider { get; set; } = "Sqlite";

    [Required]
    public string ServerConnString { get; set; } = "";

    /// <summary>PerRecord (one SELECT per ID, the default) or Range (one range query per batch); the peer's copy is set-based either way.</summary>
    public string ServerWork { get; set; } = nameof(Data.ServerWork.PerRecord);

    /// <summary>The references at a transport's concurrency: N copies at once in this process, each on its share with its own connections.</summary>
    protected override bool ServesManyClients => true;

    protected Database ServerDatabase() => Database.Create(ServerProvider, ServerConnString);

    protected RecordSource ServerSource() => new(ServerDatabase(), ServerWorks.Parse(ServerWork));
}
