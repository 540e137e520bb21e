namespace IntegrationTasks.Data;

/// <summary>Removes every row of ClientTable before a run (the series' EmptyClientTable).</summary>
public sealed class EmptyClientTable : IntegrationTask
{
    public string ClientProvider { get; set; } = "Sqlite";

    [Required]
    public string ClientConnString { get; set; } = "";

    protected override async Task ExecuteAsync(CancellationToken cancellationToken)
    {
        var database = Database.Create(ClientProvider, ClientConnString);
        await database.EmptyAsync(RecordTable.Client, cancellationToken).ConfigureAwait(false);
        Log.LogMessage(MessageImportance.Normal, "ClientTable emptied ({0}).", database.Describe());
    }
}
