using System.Threading.Channels;

namespace IntegrationTasks.Data;

/// <summary>
/// Checks that ClientTable equals ServiceTable for IDs 1..N, row for row and column for column,
/// by merging both tables in ID order (memory: a few chunks of rows per side, whatever N is).
/// </summary>
public sealed class TransferVerifier(Database server, Database client)
{
    public const int ExamplesKept = 10;

    public sealed class Report
    {
        public int Records { get; init; }
        public int Matched { get; set; }
        public int Missing { get; set; }
        public int Duplicated { get; set; }
        public int Extra { get; set; }
        public int Altered { get; set; }

        /// <summary>The payload bytes of the rows found equal (what the transfer carried beside the series' fields), and whether as text.</summary>
        public long PayloadBytes { get; set; }
        public bool TextPayload { get; set; }
        public List<int> FirstMissing { get; } = [];
        public List<int> FirstDuplicated { get; } = [];
        public List<int> FirstExtra { get; } = [];
        public List<string> FirstAltered { get; } = [];

        public bool Success => Missing == 0 && Duplicated == 0 && Extra == 0 && Altered == 0 && Matched == Records;

        /// <summary>With a batch size: batches whose rows are all there, and batches with some but not all (a half-imported batch).</summary>
        public int WholeBatches { get; set; }
        public int PartialBatches { get; set; }
        public List<int> FirstPartial { get; } = [];

        /// <summary>What a transfer that failed must still be: whole batches only, none twice, nothing altered or extra.</summary>
        public bool WholeBatchesOnly => PartialBatches == 0 && Duplicated == 0 && Extra == 0 && Altered == 0;

        public string Describe() =>
            $"ClientTable does not match ServiceTable for IDs 1..{Records}: " +
            $"{Missing} missing{Examples(FirstMissing)}, {Duplicated} duplicated{Examples(FirstDuplicated)}, " +
            $"{Extra} extra{Examples(FirstExtra)}, {Altered} altered{Examples(FirstAltered)}; {Matched} equal.";

        internal static string Examples<T>(List<T> first) => first.Count == 0 ? "" : $" (first: {string.Join(", ", first)})";
    }

    /// <param name="batchSize">When given, also counts whole and partial batches of that size (IDs 1..batchSize are the first).</param>
    public async Task<Report> CompareAsync(int records, CancellationToken cancellationToken, int? batchSize = null)
    {
        var report = new Report { Records = records };
        var matchedPerBatch = batchSize is > 0 ? new int[(records + batchSize.Value - 1) / batchSize.Value] : null;
        // The server's rows are read on a task of their own, a few chunks ahead: both tables are read at once.
        await using var expected = new ReadAhead(RecordReader.ReadOrderedAsync(server, RecordTable.Service, 1, records, cancellationToken), cancellationToken);
        await using var actual = RecordReader.ReadOrderedAsync(client, RecordTable.Client, null, null, cancellationToken)
            .GetAsyncEnumerator(cancellationToken);

        var serverRows = 0;
        var hasExpected = await expected.MoveNextAsync().ConfigureAwait(false);
        var hasActual = await actual.MoveNextAsync().ConfigureAwait(false);
        int? lastClientId = null;
        while (hasActual)
        {
            var row = actual.Current;
            if (row.Id == lastClientId)
            {
                Count(report.FirstDuplicated, row.Id, () => report.Duplicated++);
            }
            else
            {
                // Every server row before this client row is missing on the client.
                while (hasExpected && expected.Current.Id < row.Id)
                {
                    Count(report.FirstMissing, expected.Current.Id, () => report.Missing++);
                    serverRows++;
                    hasExpected = await expected.MoveNextAsync().ConfigureAwait(false);
                }
                if (hasExpected && expected.Current.Id == row.Id)
                {
                    if (row.SameValuesAs(expected.Current))
                    {
                        report.Matched++;
                        report.PayloadBytes += row.PayloadLength;
                        report.TextPayload |= row.PayloadText is not null;
                        if (matchedPerBatch is not null)
                            matchedPerBatch[(row.Id - 1) / batchSize!.Value]++;
                    }
                    else
                        Count(report.FirstAltered, $"{row.Id} [{Differences(expected.Current, row)}]", () => report.Altered++);
                    serverRows++;
                    hasExpected = await expected.MoveNextAsync().ConfigureAwait(false);
                }
                else
                {
                    Count(report.FirstExtra, row.Id, () => report.Extra++);
                }
            }
            lastClientId = row.Id;
            hasActual = await actual.MoveNextAsync().ConfigureAwait(false);
        }
        while (hasExpected)
        {
            Count(report.FirstMissing, expected.Current.Id, () => report.Missing++);
            serverRows++;
            hasExpected = await expected.MoveNextAsync().ConfigureAwait(false);
        }

        for (var batch = 0; matchedPerBatch is not null && batch < matchedPerBatch.Length; batch++)
        {
            var size = Math.Min(batchSize!.Value, records - batch * batchSize.Value);
            if (matchedPerBatch[batch] == size)
                report.WholeBatches++;
            else if (matchedPerBatch[batch] > 0)
                Count(report.FirstPartial, batch + 1, () => report.PartialBatches++);
        }

        if (serverRows < records)
            throw new IntegrationException(ErrorCodes.MissingServerRows,
                $"ServiceTable holds only {serverRows} of IDs 1..{records} ({server.Describe()}); run the GenerateData target first.");
        return report;
    }

    /// <summary>Compares and throws a coded error naming the count of each kind of loss.</summary>
    public async Task<Report> VerifyAsync(int records, CancellationToken cancellationToken)
    {
        var report = await CompareAsync(records, cancellationToken).ConfigureAwait(false);
        if (!report.Success)
            throw new IntegrationException(ErrorCodes.VerificationFailed, report.Describe());
        return report;
    }

    /// <summary>For a transfer that failed under a fault: throws unless ClientTable holds whole batches only (none partial, none twice).</summary>
    public async Task<Report> VerifyWholeBatchesAsync(int records, int batchSize, CancellationToken cancellationToken)
    {
        var report = await CompareAsync(records, cancellationToken, batchSize).ConfigureAwait(false);
        if (!report.WholeBatchesOnly)
            throw new IntegrationException(ErrorCodes.VerificationFailed,
                $"The failed transfer left more than whole batches: {report.PartialBatches} partial{Report.Examples(report.FirstPartial)}. {report.Describe()}");
        return report;
    }

    private static void Count<T>(List<T> examples, T example, Action increment)
    {
        increment();
        if (examples.Count < ExamplesKept)
            examples.Add(example);
    }

    private static string Differences(ServiceRecord expected, ServiceRecord actual)
    {
        var names = new List<string>();
        if (!string.Equals(expected.Desc, actual.Desc, StringComparison.Ordinal)) names.Add("Desc");
        if (BitConverter.DoubleToInt64Bits(expected.Value) != BitConverter.DoubleToInt64Bits(actual.Value)) names.Add("Value");
        if (expected.CreationDate.Ticks != actual.CreationDate.Ticks) names.Add("CreationDate");
        if (!string.Equals(expected.StringField1, actual.StringField1, StringComparison.Ordinal)) names.Add("StringField1");
        if (!string.Equals(expected.StringField2, actual.StringField2, StringComparison.Ordinal)) names.Add("StringField2");
        if (!expected.SamePayloadAs(actual)) names.Add("Payload");
        return string.Join("+", names);
    }
}

/// <summary>
/// A table's rows read on a task of their own, at most <see cref="ChunksAhead"/> chunks of <see cref="ChunkRows"/> rows (and about
/// <see cref="ChunkBytes"/> of payload) ahead of the reader: memory bounded whatever the table's size and the rows' payloads. A
/// failure of the read is thrown where the rows are asked for.
/// </summary>
internal sealed class ReadAhead : IAsyncEnumerator<ServiceRecord>
{
    public const int ChunkRows = 1024;
    public const int ChunkBytes = 1024 * 1024;
    public const int ChunksAhead = 4;

    private readonly Channel<ServiceRecord[]> _chunks = Channel.CreateBounded<ServiceRecord[]>(
        new BoundedChannelOptions(ChunksAhead) { SingleReader = true, SingleWriter = true });
    private readonly CancellationTokenSource _stop;
    private readonly Task _reading;
    private ServiceRecord[] _chunk = [];
    private int _index = -1;

    public ReadAhead(IAsyncEnumerable<ServiceRecord> rows, CancellationToken cancellationToken)
    {
        _stop = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        _reading = Task.Run(() => FillAsync(rows, _stop.Token), CancellationToken.None);
    }

    public ServiceRecord Current => _chunk[_index];

    private async Task FillAsync(IAsyncEnumerable<ServiceRecord> rows, CancellationToken cancellationToken)
    {
        try
        {
            var chunk = new List<ServiceRecord>(ChunkRows);
            var bytes = 0L;
            await foreach (var row in rows.WithCancellation(cancellationToken).ConfigureAwait(false))
            {
                chunk.Add(row);
                bytes += row.PayloadLength;
                if (chunk.Count < ChunkRows && bytes < ChunkBytes)
                    continue;
                await _chunks.Writer.WriteAsync([.. chunk], cancellationToken).ConfigureAwait(false);
                chunk.Clear();
                bytes = 0;
            }
            if (chunk.Count > 0)
                await _chunks.Writer.WriteAsync([.. chunk], cancellationToken).ConfigureAwait(false);
            _chunks.Writer.Complete();
        }
        catch (Exception e)
        {
            _chunks.Writer.Complete(e);
        }
    }

    public async ValueTask<bool> MoveNextAsync()
    {
        if (++_index < _chunk.Length)
            return true;
        // A read that failed completed the channel with its exception, which this wait throws.
        while (await _chunks.Reader.WaitToReadAsync(_stop.Token).ConfigureAwait(false))
        {
            if (_chunks.Reader.TryRead(out var chunk))
            {
                (_chunk, _index) = (chunk, 0);
                return true;
            }
        }
        return false;
    }

    public async ValueTask DisposeAsync()
    {
        await _stop.CancelAsync().ConfigureAwait(false);
        await _reading.ConfigureAwait(false);
        _stop.Dispose();
    }
}
