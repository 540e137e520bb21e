using System.Globalization;
using IntegrationTasks.Transfer;
using TaskItem = Microsoft.Build.Utilities.TaskItem;

namespace IntegrationTasks.Planning;

/// <summary>
/// Gives each transport the record counts it runs at: all of RunAll's, except above a transport's
/// <c>MaxRecords</c> (one call per record makes those runs long). Each count left out is reported
/// as not run, with the reason and the property that raises the cap. A transport whose cap is below every count runs at its cap
/// instead (when that is a whole number of batches), and the references run there too, so that its ratios are taken as every
/// other transport's are.
/// </summary>
public sealed class CapRecordCounts : IntegrationTask
{
    /// <summary>The selected transports; metadata MaxRecords (optional) and MaxRecordsProperty (the property that sets it).</summary>
    [Required] public ITaskItem[] Transports { get; set; } = [];

    [Required] public string[] RecordCounts { get; set; } = [];

    /// <summary>The batch size: a cap runs in place of the counts only when it is a whole number of batches.</summary>
    public int BatchSize { get; set; } = SettingDefaults.BatchSize;

    /// <summary>The client counts a run starts at (-p:Clients): a cap runs in place of the counts only when it has a batch for the fewest.</summary>
    public string[] ClientCounts { get; set; } = ["1"];

    /// <summary>The transports, each with metadata RecordCounts ('+'-separated; empty when none is left).</summary>
    [Output] public ITaskItem[] Capped { get; private set; } = [];

    /// <summary>Transport × record count left out (metadata Reason, Fix, SeriesSeconds, Replacement, as NotRunTransport).</summary>
    [Output] public ITaskItem[] NotRun { get; private set; } = [];

    protected override Task ExecuteAsync(CancellationToken cancellationToken)
    {
        var counts = RunMatrix.ParseRecordCounts(RecordCounts);
        var belowEveryCount = new SortedSet<int>();
        var fewestClients = Counts.Parse(ClientCounts, "Clients").Min();
        var capped = new List<ITaskItem>();
        var notRun = new List<ITaskItem>();
        foreach (var transport in Transports)
        {
            var definition = TransportDefinition.From(transport);
            var limit = definition.MaxRecords ?? int.MaxValue;
            var item = new TaskItem(transport);
            var runAt = counts.Where(c => c <= limit).ToList();
            if (runAt.Count == 0 && limit < int.MaxValue && limit > 0 && limit % Math.Max(BatchSize, 1) == 0
                && limit / Math.Max(BatchSize, 1) >= fewestClients)
            {
                runAt.Add(limit);
                belowEveryCount.Add(limit);
            }
            item.SetMetadata("RecordCounts", string.Join('+', runAt));
            capped.Add(item);
            foreach (var count in counts.Where(c => c > limit))
            {
                var entry = new TaskItem($"{transport.ItemSpec} at {count:N0} records");
                var property = definition.MaxRecordsProperty;
                entry.SetMetadata("Reason", string.Create(CultureInfo.InvariantCulture,
                    $"One call per record: RunAll runs it up to {limit:N0} records by default."));
                entry.SetMetadata("Fix", property.Length > 0 ? $"-p:{property}={count}" : "");
                entry.SetMetadata("SeriesSeconds", "");
                entry.SetMetadata("Replacement", "");
                entry.SetMetadata("CappedTransport", transport.ItemSpec);
                entry.SetMetadata("CappedAt", limit.ToString(CultureInfo.InvariantCulture));
                notRun.Add(entry);
            }
        }
        foreach (var reference in capped.Where(t => TransportDefinition.From(t).Reference && t.GetMetadata("RecordCounts").Length > 0))
            reference.SetMetadata("RecordCounts", string.Join('+', belowEveryCount.Concat(RunMatrix.ParseRecordCounts([reference.GetMetadata("RecordCounts")])).Distinct()));
        Capped = [.. capped];
        NotRun = [.. notRun];
        return Task.CompletedTask;
    }
}
