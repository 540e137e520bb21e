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

    /// <summary>How many warm-up runs (each a repetition 0) when <see cref="Warmup"/>: the JIT recompiles hot code for several runs.</summary>
    public int WarmupRuns { get; set; } = 1;

    [Output] public ITaskItem[] Runs { get; private set; } = [];
    [Output] public int MaxRecords { get; private set; }

    /// <summary>
    /// RecordCounts as numbers, in order. ';' separates items in MSBuild; '+' is accepted too, since
    /// -p:RecordCounts=20000+50000 needs no shell quoting.
    /// </summary>
    internal static List<int> ParseRecordCounts(IEnumerable<string> items) => Counts.Parse(items, "RecordCounts");

    protected override Task ExecuteAsync(CancellationToken cancellationToken)
    {
        var recordCounts = ParseRecordCounts(RecordCounts);
        var plan = Plan(recordCounts, Counts.Parse(ClientCounts, "Clients"), BatchSize, Repetitions, WarmupCount(Warmup, WarmupRuns), Log);
        MaxRecords = recordCounts.Max();
        Runs = [.. plan.Select(run =>
        {
            var item = new TaskItem((run.Clients == 1 ? $"{run.Records}-{run.Repetition}" : $"{run.Records}-{run.Clients}c-{run.Repetition}")
                                    + (run.WarmupRun > 1 ? $"-w{run.WarmupRun}" : ""));
            foreach (var (name, value) in run.Metadata())
                item.SetMetadata(name, value);
            return item;
        })];
        return Task.CompletedTask;
    }

    /// <summary>
    /// One run of a transport: its size, its clients and its repetition (0: a warm-up, the <paramref name="WarmupRun"/>th; the warm-ups
    /// differ in it alone, so that MSBuild neither batches them into one call nor skips one as already built).
    /// </summary>
    public sealed record PlannedRun(int Records, int TotalBatches, int Clients, int Repetition, int WarmupRun = 0)
    {
        public IEnumerable<(string Name, string Value)> Metadata() =>
        [
            ("Records", Records.ToString(CultureInfo.InvariantCulture)), ("TotalBatches", TotalBatches.ToString(CultureInfo.InvariantCulture)),
            ("Clients", Clients.ToString(CultureInfo.InvariantCulture)), ("Repetition", Repetition.ToString(CultureInfo.InvariantCulture)),
            ("WarmupRun", WarmupRun.ToString(CultureInfo.InvariantCulture)),
        ];
    }

    /// <summary>The warm-up runs before each transport's measured ones.</summary>
    public static int WarmupCount(bool warmup, int warmupRuns)
    {
        if (warmup && warmupRuns < 1)
            throw new IntegrationException(ErrorCodes.InvalidParameter, $"WarmupRuns must be at least 1 (was {warmupRuns}); -p:Warmup=false runs none.");
        return warmup ? warmupRuns : 0;
    }

    /// <summary>
    /// Record counts (smallest first) × client counts × repetitions; a count with fewer batches than clients is left out and said so. The
    /// warm-ups of each client count come with the smallest record count it runs at.
    /// </summary>
    public static List<PlannedRun> Plan(IReadOnlyList<int> recordCounts, IReadOnlyList<int> clientCounts, int batchSize, int repetitions, int warmupRuns,
        Microsoft.Build.Utilities.TaskLoggingHelper? log)
    {
        if (batchSize < 1)
            throw new IntegrationException(ErrorCodes.InvalidParameter, $"BatchSize must be at least 1 (was {batchSize}).");
        if (repetitions < 1)
            throw new IntegrationException(ErrorCodes.InvalidParameter, $"Repetitions must be at least 1 (was {repetitions}).");
        var runs = new List<PlannedRun>();
        // Warm-ups warm the code, which is the same at every record count: each client count gets them at the smallest count it runs at.
        var warmedClientCounts = new HashSet<int>();
        foreach (var records in recordCounts.Order())
        {
            if (records % batchSize != 0)
                throw new IntegrationException(ErrorCodes.InvalidParameter,
                    $"{records} records do not divide into batches of {batchSize}; choose RecordCounts that are multiples of BatchSize.");
            var batches = records / batchSize;
            foreach (var clients in clientCounts)
            {
                if (clients > batches)
                {
                    log?.LogMessage(MessageImportance.High, "Not run: {0:N0} records at {1} clients ({2} batches of {3}: each client needs a batch of its own).",
                        records, clients, batches, batchSize);
                    continue;
                }
                if (warmedClientCounts.Add(clients))
                    for (var warmupRun = 1; warmupRun <= warmupRuns; warmupRun++)
                        runs.Add(new PlannedRun(records, batches, clients, 0, warmupRun));
                for (var repetition = 1; repetition <= repetitions; repetition++)
                    runs.Add(new PlannedRun(records, batches, clients, repetition));
            }
        }
        if (runs.Count == 0)
            throw new IntegrationException(ErrorCodes.InvalidParameter, clientCounts.Count == 0 ? "Clients is empty."
                : recordCounts.Count == 0 ? "RecordCounts is empty." : $"No record count has a batch for each of the clients asked for ({string.Join(", ", clientCounts)}).");
        return runs;
    }
}
