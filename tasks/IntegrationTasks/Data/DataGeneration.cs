namespace IntegrationTasks.Data;

/// <summary>Tops ServiceTable up to IDs 1..Records with deterministic rows (see <see cref="SampleData"/>).</summary>
public sealed class DataGeneration : IntegrationTask
{
    public string ServerProvider { get; set; } = "Sqlite";

    [Required]
    public string ServerConnString { get; set; } = "";

    [Required]
    public int Records { get; set; }

    public int Seed { get; set; } = SampleData.DefaultSeed;

    /// <summary>Each row's payload in bytes beside the series' fields (0: none, the series' rows).</summary>
    public int PayloadBytes { get; set; }

    /// <summary>Bytes, or Text (UTF-8 with what XML and JSON escape).</summary>
    public string PayloadKind { get; set; } = nameof(Data.PayloadKind.Bytes);

    /// <summary>ServiceTable held another payload and was emptied before generating.</summary>
    [Output] public bool Emptied { get; private set; }

    [Output] public int Inserted { get; private set; }

    protected override async Task ExecuteAsync(CancellationToken cancellationToken)
    {
        var generator = new DataGenerator(Database.Create(ServerProvider, ServerConnString), EventLog)
        {
            Seed = Seed, Payload = PayloadShape.Of(PayloadBytes, PayloadKind),
        };
        var outcome = await generator.GenerateAsync(Records, cancellationToken).ConfigureAwait(false);
        Inserted = outcome.Inserted;
        Emptied = outcome.Emptied;
    }
}
