using System.Diagnostics;
using System.Globalization;
using System.Text;
using IntegrationTasks.Data;
using IntegrationTasks.Results;
using IntegrationTasks.Transfer;
using IntegrationTasks.Wire;

namespace IntegrationTasks.Labs;

/// <summary>One stage of the per-record path, measured alone: time and bytes allocated per record.</summary>
public sealed record StageCost(string Stage, double MicrosecondsPerRecord, double BytesAllocatedPerRecord)
{
    /// <summary>For an encoding's "out" stage: the bytes of a record in that encoding (the response's size over its records).</summary>
    public double? EncodedBytesPerRecord { get; init; }
}

/// <summary>A StageCosts run: the stages, and what they were measured on.</summary>
public sealed record StageCostsRun(string Provider, int Records, int BatchSize, IReadOnlyList<StageCost> Stages, DateTimeOffset Timestamp)
{
    /// <summary>Batches run through every stage untimed before the measured ones (0 in runs saved before there was a warm-up).</summary>
    public int WarmUpBatches { get; init; }

    /// <summary>Each row's payload (0: the series' rows) and its kind, as ServiceTable held them.</summary>
    public int PayloadBytes { get; init; }
    public string? PayloadKind { get; init; }
}

/// <summary>
/// Where a transfer's time goes when nothing runs at once: each stage of the per-record path alone, batch by batch on one
/// thread — the server's reads (one SELECT per ID, and one range query per batch), the response written as XML, parsed back,
/// and inserted in one transaction per batch. What a transport costs beyond these is its wire and its threading. Beside the
/// series' XML, the same batch as JSON (RestJson's source-generated serializers) and as protobuf (the gRPC transports' messages),
/// each written and read back (and checked equal), so the encodings' costs stand side by side.
/// </summary>
public sealed class StageCosts(Database server, Database client, int batchSize)
{
    public const string ReadPerRecord = "Server read: one SELECT per ID";
    public const string ReadRange = "Server read: one range query per batch";
    public const string XmlOut = "XML out: serialise the response";
    public const string XmlIn = "XML in: parse the response";
    public const string Insert = "Client insert: one transaction per batch";
    public const string JsonOut = "JSON out: serialise the response";
    public const string JsonIn = "JSON in: parse the response";
    public const string JsonTokens = "JSON in: its tokens only, no values";
    public const string ProtobufOut = "Protobuf out: serialise the reply";
    public const string ProtobufIn = "Protobuf in: parse the reply";
    public const string Base64Out = "Floor: base64 encode of the payloads";
    public const string Base64In = "Floor: base64 decode of the payloads";
    public const string CopyOut = "Floor: copy the same bytes out";
    public const string CopyIn = "Floor: copy the same bytes in";

    /// <summary>The stages that encode or decode a batch: not part of the series' per-record path, measured beside it.</summary>
    public static readonly IReadOnlySet<string> OtherEncodings = new HashSet<string>(StringComparer.Ordinal)
        { JsonOut, JsonIn, JsonTokens, ProtobufOut, ProtobufIn, Base64Out, Base64In, CopyOut, CopyIn };

    /// <summary>How long every stage runs untimed first (and at least <see cref="MinimumWarmUpBatches"/> batches).</summary>
    public static readonly TimeSpan WarmUp = TimeSpan.FromSeconds(6);

    public const int MinimumWarmUpBatches = 3;

    public async Task<StageCostsRun> MeasureAsync(int records, CancellationToken cancellationToken)
    {
        var plan = BatchPlan.Create(records / batchSize, batchSize);
        if (plan.Records != records)
            throw new IntegrationException(ErrorCodes.InvalidParameter, $"Records ({records}) must be a multiple of BatchSize ({batchSize}).");
        await client.EmptyAsync(RecordTable.Client, cancellationToken).ConfigureAwait(false);
        var clocks = new[] { ReadPerRecord, ReadRange, XmlOut, XmlIn, JsonOut, JsonIn, JsonTokens, ProtobufOut, ProtobufIn, Base64Out, Base64In, CopyOut, CopyIn, Insert }
            .ToDictionary(s => s, _ => (Ticks: 0L, Bytes: 0L));
        var floor = new FloorBuffers();
        var encoded = new Dictionary<string, long> { [XmlOut] = 0, [JsonOut] = 0, [ProtobufOut] = 0 };
        await using var perRecord = await RecordLookup.OpenAsync(server, ServerWork.PerRecord, cancellationToken).ConfigureAwait(false);
        await using var range = await RecordLookup.OpenAsync(server, ServerWork.Range, cancellationToken).ConfigureAwait(false);
        await using var importer = await BatchImporter.OpenAsync(client, cancellationToken).ConfigureAwait(false);
        using var message = new PooledBufferStream();
        var batch = new List<ServiceRecord>(batchSize);
        // Untimed first, as long as the JIT takes to settle: without it each stage's first batches ran its tier-0 code, and the
        // figures depended on the record count; a short warm-up still left small runs slower than large ones.
        var warmUp = Stopwatch.StartNew();
        var warmUpBatches = 0;
        while (warmUp.Elapsed < WarmUp || warmUpBatches < MinimumWarmUpBatches)
        {
            var index = warmUpBatches++ % plan.TotalBatches;
            if (index == 0 && warmUpBatches > 1)
                await client.EmptyAsync(RecordTable.Client, cancellationToken).ConfigureAwait(false); // round again: the same IDs
            await MeasureBatchAsync(index).ConfigureAwait(false);
        }
        foreach (var stage in clocks.Keys.ToList())
            clocks[stage] = (0, 0);
        foreach (var encoding in encoded.Keys.ToList())
            encoded[encoding] = 0;
        await client.EmptyAsync(RecordTable.Client, cancellationToken).ConfigureAwait(false);
        var importedBefore = importer.RecordsImported;
        for (var index = 0; index < plan.TotalBatches; index++)
            await MeasureBatchAsync(index).ConfigureAwait(false);
        if (importer.RecordsImported - importedBefore != records)
            throw new IntegrationException(ErrorCodes.LabFailed, $"{importer.RecordsImported - importedBefore:N0} of {records:N0} records were imported.");
        return new StageCostsRun(server.Provider.ToString(), records, batchSize,
            // Base64's floor only where a payload of bytes was there to encode.
            clocks.Where(c => c.Value.Ticks > 0 || c.Key is not (Base64Out or Base64In)).Select(c => new StageCost(c.Key, c.Value.Ticks * 1e6 / Stopwatch.Frequency / records, (double)c.Value.Bytes / records)
            {
                EncodedBytesPerRecord = encoded.TryGetValue(c.Key, out var size) ? (double)size / records : null,
            }).ToList(),
            DateTimeOffset.UtcNow) { WarmUpBatches = warmUpBatches };

        async Task MeasureBatchAsync(int index)
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
            encoded[XmlOut] += message.Length;
            await MeasureFloorsAsync(batch).ConfigureAwait(false);
            await MeasureOtherEncodingsAsync(batch, plan.FirstId(index)).ConfigureAwait(false);
            await TimeAsync(Insert, () => importer.ImportAsync(parsed, cancellationToken)).ConfigureAwait(false);
        }

        async Task MeasureOtherEncodingsAsync(List<ServiceRecord> batch, int firstId)
        {
            message.Reset();
            await TimeAsync(JsonOut, () =>
            {
                using var writer = new System.Text.Json.Utf8JsonWriter(message, Rest.RestProtocol.WriterOptions);
                System.Text.Json.JsonSerializer.Serialize(writer, batch, Rest.RestJsonContext.Default.ListServiceRecord);
                return Task.CompletedTask;
            }).ConfigureAwait(false);
            encoded[JsonOut] += message.Length;
            // The floor under any JSON reader: the same bytes walked token by token, nothing made of them (what is left of JSON in
            // is the values' parsing and the records' making).
            var tokens = 0;
            await TimeAsync(JsonTokens, () =>
            {
                var reader = new System.Text.Json.Utf8JsonReader(message.WrittenMemory.Span);
                while (reader.Read())
                    tokens++;
                return Task.CompletedTask;
            }).ConfigureAwait(false);
            if (tokens < batch.Count * 2)
                throw new IntegrationException(ErrorCodes.LabFailed, $"The JSON of {batch.Count} records had only {tokens} tokens.");
            List<ServiceRecord> fromJson = [];
            await TimeAsync(JsonIn, async () =>
            {
                using var input = message.OpenRead();
                await foreach (var record in Rest.RestProtocol.ReadRecordsAsync(input, cancellationToken).ConfigureAwait(false))
                    fromJson.Add(record);
            }).ConfigureAwait(false);
            CheckSame("JSON", batch, fromJson);

            byte[] reply = [];
            await TimeAsync(ProtobufOut, () =>
            {
                reply = Google.Protobuf.MessageExtensions.ToByteArray(Grpc.RecordMessages.ToReply(firstId, batch));
                return Task.CompletedTask;
            }).ConfigureAwait(false);
            encoded[ProtobufOut] += reply.Length;
            List<ServiceRecord> fromProtobuf = [];
            await TimeAsync(ProtobufIn, () =>
            {
                fromProtobuf = [.. Grpc.Contract.BatchReply.Parser.ParseFrom(reply).Records.Select(Grpc.RecordMessages.ToRecord)];
                return Task.CompletedTask;
            }).ConfigureAwait(false);
            CheckSame("protobuf", batch, fromProtobuf);
        }

        // What the hardware asks of any codec for these bytes: each payload (or, without one, the XML message) copied out and in, and
        // a payload of bytes base64-encoded and decoded by the vectorised routines; the buffers are made before the clock starts.
        async Task MeasureFloorsAsync(List<ServiceRecord> batch)
        {
            var parts = floor.Parts(batch, message.WrittenMemory);
            await TimeAsync(CopyOut, () =>
            {
                floor.CopyOut(parts);
                return Task.CompletedTask;
            }).ConfigureAwait(false);
            await TimeAsync(CopyIn, () =>
            {
                floor.CopyIn(parts);
                return Task.CompletedTask;
            }).ConfigureAwait(false);
            var binary = batch.Where(r => r.Payload is { Length: > 0 }).Select(r => r.Payload!).ToList();
            if (binary.Count == 0)
                return;
            await TimeAsync(Base64Out, () =>
            {
                floor.EncodeBase64(binary);
                return Task.CompletedTask;
            }).ConfigureAwait(false);
            var texts = FloorBuffers.Base64Texts(binary);
            await TimeAsync(Base64In, () =>
            {
                floor.DecodeBase64(texts);
                return Task.CompletedTask;
            }).ConfigureAwait(false);
        }

        static void CheckSame(string encoding, List<ServiceRecord> sent, List<ServiceRecord> back)
        {
            if (sent.Count != back.Count || sent.Zip(back).Any(p => !p.First.SameValuesAs(p.Second)))
                throw new IntegrationException(ErrorCodes.LabFailed, $"A batch did not read back equal from {encoding} ({back.Count} of {sent.Count} records).");
        }

        async Task TimeAsync(string stage, Func<Task> work)
        {
            // Allocations of the whole process (a stage's continuations may run on other threads), per batch; precise, since
            // the cheap count leaves out each thread's allocation context (~8 KB), more than some stages allocate per batch.
            var bytes = GC.GetTotalAllocatedBytes(precise: true);
            var start = Stopwatch.GetTimestamp();
            await work().ConfigureAwait(false);
            var elapsed = Stopwatch.GetTimestamp() - start;
            var (ticks, allocated) = clocks[stage];
            clocks[stage] = (ticks + elapsed, allocated + GC.GetTotalAllocatedBytes(precise: true) - bytes);
        }
    }
}

/// <summary>
/// The floors' working memory, kept between batches so that no stage is timed making it: the bytes to copy, a destination for each,
/// and base64's text.
/// </summary>
internal sealed class FloorBuffers
{
    private byte[] _out = [];
    private byte[] _in = [];
    private byte[] _base64 = [];
    private readonly List<ReadOnlyMemory<byte>> _parts = [];

    /// <summary>Each row's payload (a text's UTF-8), or, when no row has one, the whole XML message: the bytes any codec must move.</summary>
    public IReadOnlyList<ReadOnlyMemory<byte>> Parts(IReadOnlyList<ServiceRecord> batch, ReadOnlyMemory<byte> message)
    {
        _parts.Clear();
        foreach (var row in batch)
        {
            if (row.Payload is { } bytes)
                _parts.Add(bytes);
            else if (row.PayloadText is { } text)
                _parts.Add(Encoding.UTF8.GetBytes(text));
        }
        if (_parts.Count == 0)
            _parts.Add(message.ToArray());
        var largest = _parts.Max(p => p.Length);
        if (_out.Length < largest)
            (_out, _in, _base64) = (new byte[largest], new byte[largest], new byte[System.Buffers.Text.Base64.GetMaxEncodedToUtf8Length(largest)]);
        return _parts;
    }

    public void CopyOut(IReadOnlyList<ReadOnlyMemory<byte>> parts)
    {
        foreach (var part in parts)
            part.Span.CopyTo(_out);
    }

    public void CopyIn(IReadOnlyList<ReadOnlyMemory<byte>> parts)
    {
        foreach (var part in parts)
            _out.AsSpan(0, part.Length).CopyTo(_in);
    }

    public void EncodeBase64(IReadOnlyList<byte[]> payloads)
    {
        foreach (var payload in payloads)
            System.Buffers.Text.Base64.EncodeToUtf8(payload, _base64, out _, out _);
    }

    /// <summary>The payloads' base64 (UTF-8), made before the decode is timed.</summary>
    public static List<byte[]> Base64Texts(IReadOnlyList<byte[]> payloads) =>
        [.. payloads.Select(p => Encoding.ASCII.GetBytes(Convert.ToBase64String(p)))];

    public void DecodeBase64(IReadOnlyList<byte[]> texts)
    {
        foreach (var text in texts)
        {
            if (System.Buffers.Text.Base64.DecodeFromUtf8(text, _in, out _, out _) != System.Buffers.OperationStatus.Done)
                throw new IntegrationException(ErrorCodes.LabFailed, "A payload did not decode back from base64.");
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
    public int BatchSize { get; set; } = SettingDefaults.BatchSize;

    /// <summary>The payload ServiceTable's rows carry (GenerateData's): the batches are then bounded by BatchBytes too.</summary>
    public int PayloadBytes { get; set; }
    public string PayloadKind { get; set; } = nameof(Data.PayloadKind.Bytes);
    public long BatchBytes { get; set; } = SettingDefaults.BatchBytes;

    protected override async Task ExecuteAsync(CancellationToken cancellationToken)
    {
        var server = Database.Create(ServerProvider, ServerConnString);
        var client = Database.Create(ClientProvider, ClientConnString);
        await client.EnsureSchemaAsync(cancellationToken).ConfigureAwait(false);
        var payload = PayloadShape.Of(PayloadBytes, PayloadKind);
        var batchSize = BatchBytesCheck.EffectiveBatchSize(BatchSize, payload.Bytes, BatchBytes);
        if (batchSize < 1 || Records < batchSize)
            throw new IntegrationException(ErrorCodes.InvalidParameter, $"StageCosts needs 1 ≤ BatchSize ({batchSize}) ≤ Records ({Records}).");
        var records = payload.Bytes > 0 ? Records / batchSize * batchSize : Records; // whole batches of the size BatchBytes made them
        Log.LogMessage(MessageImportance.High, "StageCosts: {0:N0} records with {1} in batches of {2:N0}, each stage alone…", records, payload, batchSize);
        var run = await new StageCosts(server, client, batchSize).MeasureAsync(records, cancellationToken).ConfigureAwait(false) with
        {
            PayloadBytes = payload.Bytes, PayloadKind = payload.Bytes > 0 ? payload.Kind.ToString() : null,
        };
        Log.LogMessage(MessageImportance.High, "  (after {0:N0} batches untimed, for the JIT to settle)", run.WarmUpBatches);
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

    private static readonly IReadOnlyList<Results.ReportColumn<StageCost>> Columns =
    [
        new("stage", "Stage", s => s.Stage, Numeric: false),
        new("microsPerRecord", "µs / record", s => s.MicrosecondsPerRecord.ToString("F2", Invariant)),
        new("bytesAllocatedPerRecord", "Bytes allocated / record", s => s.BytesAllocatedPerRecord.ToString("N0", Invariant)),
    ];

    /// <summary>An encoding's two stages together: what a batch costs to write and read back in it, and its size.</summary>
    public sealed record EncodingCost(string Encoding, StageCost Out, StageCost In)
    {
        public double MicrosecondsPerRecord => Out.MicrosecondsPerRecord + In.MicrosecondsPerRecord;
    }

    /// <summary>The encodings' table; "× protobuf" divides by protobuf's out + in in the same run (a machine's speed varies from day to day, a ratio less).</summary>
    private static IReadOnlyList<Results.ReportColumn<EncodingCost>> EncodingColumns(double? protobufMicros) =>
    [
        new("encoding", "Encoding", e => e.Encoding, Numeric: false),
        new("outMicros", "Out µs / record", e => e.Out.MicrosecondsPerRecord.ToString("F2", Invariant)),
        new("inMicros", "In µs / record", e => e.In.MicrosecondsPerRecord.ToString("F2", Invariant)),
        new("totalMicros", "Out + in µs / record", e => e.MicrosecondsPerRecord.ToString("F2", Invariant)),
        new("timesProtobuf", "× protobuf", e => protobufMicros is > 0 ? (e.MicrosecondsPerRecord / protobufMicros.Value).ToString("F2", Invariant) : "–"),
        new("encodedBytes", "Bytes / record", e => e.Out.EncodedBytesPerRecord is { } b ? b.ToString("F0", Invariant) : "–"),
        new("allocated", "Allocated out + in / record", e => (e.Out.BytesAllocatedPerRecord + e.In.BytesAllocatedPerRecord).ToString("N0", Invariant)),
    ];

    /// <summary>With a payload: what an encoding's out and in cost per KiB of it (the row's own fields included, which large rows make small).</summary>
    private static Results.ReportColumn<EncodingCost> PerKibibyte(int payloadBytes) =>
        new("microsPerKiB", "Out + in µs / KiB of payload", e => (e.MicrosecondsPerRecord * 1024 / payloadBytes).ToString("F3", Invariant));

    /// <summary>
    /// XML (the series' and SOAP's), JSON (RestJson's) and protobuf (gRPC's), where the run measured them, and beside them the floors:
    /// the same payload bytes through the vectorised base64 routines, and copied out and in.
    /// </summary>
    public static List<EncodingCost> Encodings(StageCostsRun run)
    {
        StageCost? Stage(string name) => run.Stages.FirstOrDefault(s => s.Stage == name);
        return new[]
            {
                ("XML", StageCosts.XmlOut, StageCosts.XmlIn), ("JSON", StageCosts.JsonOut, StageCosts.JsonIn), ("Protobuf", StageCosts.ProtobufOut, StageCosts.ProtobufIn),
                ("Floor: base64", StageCosts.Base64Out, StageCosts.Base64In), ("Floor: copy", StageCosts.CopyOut, StageCosts.CopyIn),
            }
            .Where(e => Stage(e.Item2) is not null && Stage(e.Item3) is not null)
            .Select(e => new EncodingCost(e.Item1, Stage(e.Item2)!, Stage(e.Item3)!)).ToList();
    }

    public static ReportDocument Document(StageCostsRun run)
    {
        var document = new ReportDocument().AddHeading(2, string.Create(Invariant,
            $"StageCosts: each stage of the per-record path alone ({run.Provider}, {run.Records:N0} records{(run.PayloadBytes > 0 ? $" of {RunKey.PayloadSize(run.PayloadBytes)} payload ({run.PayloadKind})" : "")} in batches of {run.BatchSize:N0}, one thread)"));
        if (run.WarmUpBatches > 0)
            document.AddParagraph(string.Create(Invariant,
                $"Timed after {run.WarmUpBatches:N0} batches through every stage untimed (at least {StageCosts.WarmUp.TotalSeconds:0.#} s, for the JIT to settle)."), ReportFormats.Markdown);
        document.AddTable(Columns, run.Stages, ReportFormats.Markdown);
        var serial = run.Stages.Where(s => s.Stage != StageCosts.ReadRange && !StageCosts.OtherEncodings.Contains(s.Stage)).Sum(s => s.MicrosecondsPerRecord);
        document.AddParagraph(string.Create(Invariant,
            $"One after the other (per-ID reads, XML): {serial:F2} µs a record, {serial * run.Records / 1e6:F2} s for these records — a transport on two cores can overlap the server's stages with the client's, not go below the slower side."),
            ReportFormats.Markdown);
        if (Encodings(run) is { Count: > 1 } encodings)
        {
            var columns = EncodingColumns(encodings.FirstOrDefault(e => e.Encoding == "Protobuf")?.MicrosecondsPerRecord);
            document
                .AddParagraph("The same batches in each encoding a transport here uses — XML (the series' TCP, HTTP, files, queues; SOAP's envelope is more), "
                              + "JSON (RestJson) and protobuf (gRPC) — written and read back, each checked equal to what was read:", ReportFormats.Markdown)
                .AddTable(run.PayloadBytes > 0 ? [.. columns, PerKibibyte(run.PayloadBytes)] : columns, encodings, ReportFormats.Markdown)
                .AddParagraph("The floors are no codec: what moving these bytes costs at the least — base64's encode and decode (for a payload of bytes, "
                              + "what XML and JSON carry it as) and a plain copy out and in (each payload, or without one the XML message).", ReportFormats.Markdown);
        }
        return document.AddChart(new ReportBarChart("stagecosts", "µs per record, each stage alone",
            [.. run.Stages.Select(s => new ReportBar(s.Stage, s.MicrosecondsPerRecord))], "F2"));
    }
}
