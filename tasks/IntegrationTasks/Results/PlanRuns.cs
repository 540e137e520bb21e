using System.Globalization;
using IntegrationTasks.Common;
using Microsoft.Build.Framework;
using TaskItem = Microsoft.Build.Utilities.TaskItem;
using IntegrationTasks.Transfer;

namespace IntegrationTasks.Results;

/// <summary>Expands record counts × repetitions into run items (metadata Records, TotalBatches, Repetition).</summary>
public sealed class PlanRuns : IntegrationTask
{
    [Required] public string[] RecordCounts { get; set; } = [];
    [Required] public int BatchSize { get; set; }
    [Required] public int Repetitions { get; set; }

    /// <summary>Run a repetition 0 first, recorded as the warm-up and kept out of the statistics.</summary>
    public bool Warmup { get; set; } = true;

    [Output] public ITaskItem[] Runs { get; private set; } = [];
    [Output] public int MaxRecords { get; private set; }

    /// <summary>
    /// RecordCounts as numbers, in order. ';' separates items in MSBuild; '+' is accepted too, since
    /// -p:RecordCounts=20000+50000 needs no shell quoting.
    /// </summary>
    internal static List<int> ParseRecordCounts(IEnumerable<string> items) =>
        items.SelectMany(c => c.Split('+')).Select(c => c.Trim()).Where(c => c.Length > 0)
            .Select(text => int.TryParse(text, NumberStyles.None, CultureInfo.InvariantCulture, out var records) && records >= 1 ? records
                : throw new IntegrationException(ErrorCodes.InvalidParameter, $"RecordCounts holds '{text}', which is not a positive whole number."))
            .ToList();

    protected override Task ExecuteAsync(CancellationToken cancellationToken)
    {
        if (BatchSize < 1)
            throw new IntegrationException(ErrorCodes.InvalidParameter, $"BatchSize must be at least 1 (was {BatchSize}).");
        if (Repetitions < 1)
            throw new IntegrationException(ErrorCodes.InvalidParameter, $"Repetitions must be at least 1 (was {Repetitions}).");
        var runs = new List<ITaskItem>();
        foreach (var records in ParseRecordCounts(RecordCounts))
        {
            if (records % BatchSize != 0)
                throw new IntegrationException(ErrorCodes.InvalidParameter,
                    $"{records} records do not divide into batches of {BatchSize}; choose RecordCounts that are multiples of BatchSize.");
            MaxRecords = Math.Max(MaxRecords, records);
            for (var repetition = Warmup ? 0 : 1; repetition <= Repetitions; repetition++)
            {
                var item = new TaskItem($"{records}-{repetition}");
                item.SetMetadata("Records", records.ToString(CultureInfo.InvariantCulture));
                item.SetMetadata("TotalBatches", (records / BatchSize).ToString(CultureInfo.InvariantCulture));
                item.SetMetadata("Repetition", repetition.ToString(CultureInfo.InvariantCulture));
                runs.Add(item);
            }
        }
        if (runs.Count == 0)
            throw new IntegrationException(ErrorCodes.InvalidParameter, "RecordCounts is empty.");
        Runs = [.. runs];
        return Task.CompletedTask;
    }
}
