using System.Globalization;
using IntegrationTasks.Common;
using Microsoft.Build.Framework;
using TaskItem = Microsoft.Build.Utilities.TaskItem;

namespace IntegrationTasks.Results;

/// <summary>Expands record counts × client counts × repetitions into run items (metadata Records, TotalBatches, Clients, Repetition).</summary>
public sealed class PlanRuns : IntegrationTask
{
    [Required] public string[] RecordCounts { get; set; } = [];
    [Required] public int BatchSize { get; set; }
    [Required] public int Repetitions { get; set; }

    /// <summary>
    /// Clients one run starts at once ('+' or ';' between counts: -p:Clients=1+4+16): each record count is run at each. A count
    /// with more clients than the record count has batches is not run (each client needs a batch), and said so.
    /// </summary>
    public string[] ClientCounts { get; set; } = ["1"];

    /// <summary>Run a repetition 0 first, recorded as the warm-up and kept out of the statistics.</summary>
    public bool Warmup { get; set; } = true;

    [Output] public ITaskItem[] Runs { get; private set; } = [];
    [Output] public int MaxRecords { get; private set; }

    /// <summary>
    /// RecordCounts as numbers, in order. ';' separates items in MSBuild; '+' is accepted too, since
    /// -p:RecordCounts=20000+50000 needs no shell quoting.
    /// </summary>
    internal static List<int> ParseRecordCounts(IEnumerable<string> items) => Counts.Parse(items, "RecordCounts");

    protected override Task ExecuteAsync(CancellationToken cancellationToken)
    {
        if (BatchSize < 1)
            throw new IntegrationException(ErrorCodes.InvalidParameter, $"BatchSize must be at least 1 (was {BatchSize}).");
        if (Repetitions < 1)
            throw new IntegrationException(ErrorCodes.InvalidParameter, $"Repetitions must be at least 1 (was {Repetitions}).");
        var clientCounts = Counts.Parse(ClientCounts, "Clients");
        var runs = new List<ITaskItem>();
        foreach (var records in ParseRecordCounts(RecordCounts))
        {
            if (records % BatchSize != 0)
                throw new IntegrationException(ErrorCodes.InvalidParameter,
                    $"{records} records do not divide into batches of {BatchSize}; choose RecordCounts that are multiples of BatchSize.");
            MaxRecords = Math.Max(MaxRecords, records);
            var batches = records / BatchSize;
            foreach (var clients in clientCounts)
            {
                if (clients > batches)
                {
                    Log.LogMessage(MessageImportance.High, "Not run: {0:N0} records at {1} clients ({2} batches of {3}: each client needs a batch of its own).",
                        records, clients, batches, BatchSize);
                    continue;
                }
                for (var repetition = Warmup ? 0 : 1; repetition <= Repetitions; repetition++)
                {
                    var item = new TaskItem(clients == 1 ? $"{records}-{repetition}" : $"{records}-{clients}c-{repetition}");
                    item.SetMetadata("Records", records.ToString(CultureInfo.InvariantCulture));
                    item.SetMetadata("TotalBatches", batches.ToString(CultureInfo.InvariantCulture));
                    item.SetMetadata("Clients", clients.ToString(CultureInfo.InvariantCulture));
                    item.SetMetadata("Repetition", repetition.ToString(CultureInfo.InvariantCulture));
                    runs.Add(item);
                }
            }
        }
        if (runs.Count == 0)
            throw new IntegrationException(ErrorCodes.InvalidParameter, clientCounts.Count == 0 ? "Clients is empty."
                : MaxRecords == 0 ? "RecordCounts is empty." : $"No record count has a batch for each of the clients asked for ({string.Join(", ", clientCounts)}).");
        Runs = [.. runs];
        return Task.CompletedTask;
    }
}
