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

    /// <summary>Also compute the data set's fingerprint (<see cref="DataSetFingerprint"/>), once the rows are there: it reads them all.</summary>
    public bool Fingerprint { get; set; }

    [Output] public string DataSetFingerprintText { get; private set; } = "";

    protected override async Task ExecuteAsync(CancellationToken cancellationToken)
    {
        var database = Database.Create(ServerProvider, ServerConnString);
        var generator = new DataGenerator(database, EventLog)
        {
            Seed = Seed, Payload = PayloadShape.Of(PayloadBytes, PayloadKind),
        };
        var outcome = await generator.GenerateAsync(Records, cancellationToken).ConfigureAwait(false);
        Inserted = outcome.Inserted;
        Emptied = outcome.Emptied;
        if (Fingerprint)
        {
            DataSetFingerprintText = await DataSetFingerprint.OfAsync(database, Records, cancellationToken).ConfigureAwait(false);
            Log.LogMessage(MessageImportance.High, "Data set: {0}", DataSetFingerprintText);
        }
    }
}
