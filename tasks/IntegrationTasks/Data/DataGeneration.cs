using IntegrationTasks.Common;
using Microsoft.Build.Framework;

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

    [Output] public int Inserted { get; private set; }

    protected override async Task ExecuteAsync(CancellationToken cancellationToken)
    {
        var generator = new DataGenerator(Database.Create(ServerProvider, ServerConnString), EventLog) { Seed = Seed };
        var outcome = await generator.GenerateAsync(Records, cancellationToken).ConfigureAwait(false);
        Inserted = outcome.Inserted;
    }
}
