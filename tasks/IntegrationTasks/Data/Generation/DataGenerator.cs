using System.Data;
using System.Diagnostics;

namespace IntegrationTasks.Data;

/// <summary>Fills ServiceTable with IDs 1..N from <see cref="SampleData"/>; only missing IDs are inserted.</summary>
public sealed class DataGenerator(Database database, IEventLog log)
{
    public int ChunkSize { get; init; } = 20_000;
    public int Seed { get; init; } = SampleData.DefaultSeed;

    /// <summary>A chunk of rows written in one transaction holds at most this many payload bytes too.</summary>
    public int ChunkBytes { get; init; } = 16 * 1024 * 1024;

    public PayloadShape Payload { get; init; } = PayloadShape.None;

    /// <param name="Emptied">ServiceTable held rows of another payload and was emptied first.</param>
    public sealed record Outcome(int Existing, int Inserted, TimeSpan Elapsed, bool Emptied = false);

    public async Task<Outcome> GenerateAsync(int records, CancellationToken cancellationToken)
    {
        if (records < 1)
            throw new IntegrationException(ErrorCodes.InvalidParameter, $"Records must be at least 1 (was {records}).");
        var watch = Stopwatch.StartNew();
        await database.EnsureSchemaAsync(cancellationToken).ConfigureAwait(false);
        // One data set per payload: rows of another are removed, not mixed (rows are written from the lowest ID up, so the first tells).
        var emptied = false;
        if (await FirstRowAsync(cancellationToken).ConfigureAwait(false) is { } first && !first.SamePayloadAs(SamplePayload.Row(first.Id, Payload, Seed)))
        {
            var found = PayloadShape.Of(first);
            log.Info(found == Payload
                ? $"ServiceTable's rows carry {found} made with another seed than {Seed}: emptying it to generate them again."
                : $"ServiceTable's rows carry {found}, and {Payload} is asked for: emptying it to generate them again.");
            await database.EmptyAsync(RecordTable.Service, cancellationToken).ConfigureAwait(false);
            emptied = true;
        }
        var (existing, maxId) = await CountExistingAsync(records, cancellationToken).ConfigureAwait(false);
        if (existing == records)
        {
            log.Info($"ServiceTable already holds IDs 1..{records:N0} with {Payload}; nothing to generate.");
            return new Outcome(existing, 0, watch.Elapsed);
        }
        log.Info($"Generating {records - existing:N0} rows with {Payload} into ServiceTable ({existing:N0} of {records:N0} exist, seed {Seed}).");

        // Contiguous: top up after the last ID. Gaps: list them first, so no read stays open while writing.
        var missing = existing == maxId
            ? Range(maxId + 1, records)
            : await ListMissingIdsAsync(records, cancellationToken).ConfigureAwait(false);
        var inserted = 0;
        var nextReport = Math.Max(records / 10, 1);
        await using var writer = await RecordWriter.OpenAsync(database, RecordTable.Service, cancellationToken).ConfigureAwait(false);
        var chunk = new List<ServiceRecord>(Math.Min(ChunkSize, records));
        var chunkBytes = 0L;
        foreach (var id in missing)
        {
            cancellationToken.ThrowIfCancellationRequested();
            chunk.Add(SamplePayload.Row(id, Payload, Seed));
            chunkBytes += Payload.Bytes;
            if (chunk.Count < ChunkSize && chunkBytes < ChunkBytes)
                continue;
            await writer.InsertBatchAsync(chunk, cancellationToken).ConfigureAwait(false);
            inserted += chunk.Count;
            chunk.Clear();
            chunkBytes = 0;
            if (inserted >= nextReport)
            {
                log.Info($"  {existing + inserted:N0} of {records:N0} rows ({watch.Elapsed.TotalSeconds:F1} s)");
                nextReport += Math.Max(records / 10, 1);
            }
        }
        await writer.InsertBatchAsync(chunk, cancellationToken).ConfigureAwait(false);
        inserted += chunk.Count;
        var settle = Stopwatch.StartNew();
        if (await database.SettleAsync(RecordTable.Service, cancellationToken).ConfigureAwait(false))
            log.Info($"Settled ServiceTable in {settle.Elapsed.TotalSeconds:F1} s (vacuumed and analysed now, so the database's own maintenance does not start during the runs).");
        log.Info($"Generated {inserted:N0} rows in {watch.Elapsed.TotalSeconds:F1} s; ServiceTable holds IDs 1..{records:N0}.");
        return new Outcome(existing, inserted, watch.Elapsed, emptied);
    }

    /// <summary>ServiceTable's row of the lowest ID, or null when it is empty.</summary>
    private async Task<ServiceRecord?> FirstRowAsync(CancellationToken cancellationToken)
    {
        var table = RecordTable.Service;
        await using var connection = await database.OpenAsync(cancellationToken).ConfigureAwait(false);
        await using var command = connection.CreateCommand();
        command.CommandText = $"SELECT {table.ColumnList} FROM {table.Name} WHERE {table.IdColumn} = (SELECT MIN({table.IdColumn}) FROM {table.Name})";
        if (database.Dialect.ReadsPrepared)
            await command.PrepareAsync(cancellationToken).ConfigureAwait(false);
        await using var reader = await command.ExecuteReaderAsync(cancellationToken).ConfigureAwait(false);
        return await reader.ReadAsync(cancellationToken).ConfigureAwait(false) ? RecordMapping.Read(reader) : null;
    }

    private async Task<(int Count, int MaxId)> CountExistingAsync(int records, CancellationToken cancellationToken)
    {
        var table = RecordTable.Service;
        await using var connection = await database.OpenAsync(cancellationToken).ConfigureAwait(false);
        await using var command = connection.CreateCommand();
        command.CommandText = $"SELECT COUNT(*), MAX({table.IdColumn}) FROM {table.Name} WHERE {table.IdColumn} BETWEEN 1 AND @n";
        SqlDialect.AddParameter(command, "@n", DbType.Int32).Value = records;
        await using var reader = await command.ExecuteReaderAsync(cancellationToken).ConfigureAwait(false);
        await reader.ReadAsync(cancellationToken).ConfigureAwait(false);
        var count = Convert.ToInt32(reader.GetValue(0));
        var max = reader.IsDBNull(1) ? 0 : Convert.ToInt32(reader.GetValue(1));
        return (count, max);
    }

    private async Task<IEnumerable<int>> ListMissingIdsAsync(int records, CancellationToken cancellationToken)
    {
        var missing = new List<int>();
        var expected = 1;
        await foreach (var row in RecordReader.ReadOrderedAsync(database, RecordTable.Service, 1, records, cancellationToken)
                           .ConfigureAwait(false))
        {
            for (; expected < row.Id; expected++)
                missing.Add(expected);
            expected = row.Id + 1;
        }
        for (; expected <= records; expected++)
            missing.Add(expected);
        return missing;
    }

    private static IEnumerable<int> Range(int first, int last) => Enumerable.Range(first, last - first + 1);
}
