using System.Diagnostics;
using System.Globalization;
using System.Net;
using System.Text;
using IntegrationTasks.Common;
using IntegrationTasks.Data;
using IntegrationTasks.Transfer;
using IntegrationTasks.Wire;
using Microsoft.Build.Framework;

namespace IntegrationTasks.Labs;

/// <summary>One stage of the per-record path, measured alone: time and bytes allocated per record.</summary>
public sealed record StageCost(string Stage, double MicrosecondsPerRecord, double BytesAllocatedPerRecord);

/// <summary>A StageCosts run: the stages, and what they were measured on.</summary>
public sealed record StageCostsRun(string Provider, int Records, int BatchSize, IReadOnlyList<StageCost> Stages, DateTimeOffset Timestamp);

/// <summary>
/// Where a transfer's time goes when nothing runs at once: each stage of the per-record path alone, batch by batch on one
/// thread — the server's reads (one SELECT per ID, and one range query per batch), the response written as XML, parsed back,
/// and inserted in one transaction per batch. What a transport costs beyond these is its wire and its threading.
/// </summary>
public sealed class StageCosts(Database server, Database client, int batchSize)
{
    public const string ReadPerRecord = "Server read: one SELECT per ID";
    public const string ReadRange = "Server read: one range query per batch";
    public const string XmlOut = "XML out: serialise the response";
    public const string XmlIn = "XML in: parse the response";
    public const string Insert = "Client insert: one transaction per batch";

    public async Task<StageCostsRun> MeasureAsync(int records, CancellationToken cancellationToken)
    {
        var plan = BatchPlan.Create(records / batchSize, batchSize);
        if (plan.Records != records)
            throw new IntegrationException(ErrorCodes.InvalidParameter, $"Records ({records}) must be a multiple of BatchSize ({batchSize}).");
        await client.EmptyAsync(RecordTable.Client, cancellationToken).ConfigureAwait(false);
        var clocks = new[] { ReadPerRecord, ReadRange, XmlOut, XmlIn, Insert }.ToDictionary(s => s, _ => (Ticks: 0L, Bytes: 0L));
        await using var perRecord = await RecordLookup.OpenAsync(server, ServerWork.PerRecord, cancellationToken).ConfigureAwait(false);
        await using var range = await RecordLookup.OpenAsync(server, ServerWork.Range, cancellationToken).ConfigureAwait(false);
        await using var importer = await BatchImporter.OpenAsync(client, cancellationToken).ConfigureAwait(false);
        using var message = new PooledBufferStream();
        var batch = new List<ServiceRecord>(batchSize);
        for (var index = 0; index < plan.TotalBatches; index++)
        {
            batch.Clear();
            await TimeAsync(ReadPerRecord, async () =>
            {
                await foreach (var record in perRecord.ReadAsync(plan.Ids(index), cancellationToken).ConfigureAwait(false))
                    batch.Add(record);
            }).ConfigureAwait(false);
            var count = 0;
            await TimeAsync(ReadRange, async () =>
            {
                await foreach (var _ in range.ReadAsync(plan.FirstId(index), plan.BatchSize, cancellationToken).ConfigureAwait(false))
                    count++;
            }).ConfigureAwait(false);
            if (count != batch.Count)
                throw new IntegrationException(ErrorCodes.LabFailed, $"Batch {index}: the range read {count} records, the per-ID reads {batch.Count}.");
            message.Reset();
            await TimeAsync(XmlOut, () =>
            {
                RecordXml.WriteResponse(message, batch);
                return Task.CompletedTask;
            }).ConfigureAwait(false);
            List<ServiceRecord> parsed = [];
            await TimeAsync(XmlIn, () =>
            {
                using var input = message.OpenRead();
                parsed = RecordXml.ReadResponse(input, cancellationToken);
                return Task.CompletedTask;
            }).ConfigureAwait(false);
            await TimeAsync(Insert, () => importer.ImportAsync(parsed, cancellationToken)).ConfigureAwait(false);
        }
        if (importer.RecordsImported != records)
            throw new IntegrationException(ErrorCodes.LabFailed, $"{importer.RecordsImported:N0} of {records:N0} records were imported.");
        return new StageCostsRun(server.Provider.ToString(), records, batchSize,
            clocks.Select(c => new StageCost(c.Key, c.Value.Ticks * 1e6 / Stopwatch.Frequency / records, (double)c.Value.Bytes / records)).ToList(),
            DateTimeOffset.UtcNow);

        async Task TimeAsync(string stage, Func<Task> work)
        {
            // Allocations of the whole process (a stage's continuations may run on other threads), per batch.
            var bytes = GC.GetTotalAllocatedBytes(precise: false);
            var start = Stopwatch.GetTimestamp();
            await work().ConfigureAwait(false);
            var elapsed = Stopwatch.GetTimestamp() - start;
            var (ticks, allocated) = clocks[stage];
            clocks[stage] = (ticks + elapsed, allocated + GC.GetTotalAllocatedBytes(precise: false) - bytes);
        }
    }
}

/// <summary>Measures the stages on the run's databases (ServiceTable as generated, ClientTable emptied) and records them for the report.</summary>
public sealed class StageCostsTask : IntegrationTask
{
    public string ServerProvider { get; set; } = "Sqlite";
    [Required] public string ServerConnString { get; set; } = "";
    public string ClientProvider { get; set; } = "Sqlite";
    [Required] public string ClientConnString { get; set; } = "";
    [Required] public string ResultsDirectory { get; set; } = "";
    public int Records { get; set; } = 100_000;
    public int BatchSize { get; set; } = 1000;

    protected override async Task ExecuteAsync(CancellationToken cancellationToken)
    {
        var server = Database.Create(ServerProvider, ServerConnString);
        var client = Database.Create(ClientProvider, ClientConnString);
        await client.EnsureSchemaAsync(cancellationToken).ConfigureAwait(false);
        if (BatchSize < 1 || Records < BatchSize)
            throw new IntegrationException(ErrorCodes.InvalidParameter, $"StageCosts needs 1 ≤ BatchSize ({BatchSize}) ≤ Records ({Records}).");
        Log.LogMessage(MessageImportance.High, "StageCosts: {0:N0} records in batches of {1:N0}, each stage alone…", Records, BatchSize);
        var run = await new StageCosts(server, client, BatchSize).MeasureAsync(Records, cancellationToken).ConfigureAwait(false);
        foreach (var stage in run.Stages)
            Log.LogMessage(MessageImportance.High, "  {0,-45} {1,8:F2} µs/record {2,8:N0} B/record", stage.Stage, stage.MicrosecondsPerRecord, stage.BytesAllocatedPerRecord);
        StageCostsReport.Save(ResultsDirectory, run);
    }
}

public static class StageCostsReport
{
    public const string FileName = "stagecosts.json";
    private static readonly CultureInfo Invariant = CultureInfo.InvariantCulture;

    public static void Save(string directory, StageCostsRun run) => LabResults.Save(directory, FileName, run);

    public static StageCostsRun? Load(string directory) => LabResults.Load<StageCostsRun>(directory, FileName);

    public static string Markdown(StageCostsRun run)
    {
        var md = new StringBuilder(string.Create(Invariant,
            $"\n## StageCosts: each stage of the per-record path alone ({run.Provider}, {run.Records:N0} records in batches of {run.BatchSize:N0}, one thread)\n\n"));
        md.Append("| Stage | µs / record | Bytes allocated / record |\n|---|---:|---:|\n");
        foreach (var stage in run.Stages)
            md.Append(Invariant, $"| {stage.Stage} | {stage.MicrosecondsPerRecord:F2} | {stage.BytesAllocatedPerRecord:N0} |\n");
        var serial = run.Stages.Where(s => s.Stage != StageCosts.ReadRange).Sum(s => s.MicrosecondsPerRecord);
        md.Append(Invariant, $"\nOne after the other (per-ID reads): {serial:F2} µs a record, {serial * run.Records / 1e6:F2} s for these records — ");
        md.Append("a transport on two cores can overlap the server's stages with the client's, not go below the slower side.\n");
        return md.ToString();
    }

    public static string Html(StageCostsRun run)
    {
        var bars = run.Stages.Select(s => new Results.HtmlReport.Bar(s.Stage, s.MicrosecondsPerRecord)).ToList();
        return string.Create(Invariant, $"<h2>StageCosts ({WebUtility.HtmlEncode(run.Provider)}, {run.Records:N0} records)</h2>")
               + Results.HtmlReport.BarChart("stagecosts", "µs per record, each stage alone", bars, "F2");
    }
}
