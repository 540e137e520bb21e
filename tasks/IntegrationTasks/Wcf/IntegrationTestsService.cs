using System.ServiceModel;
using System.Threading.Channels;
using IntegrationTasks.Data;

namespace IntegrationTasks.Wcf;

/// <summary>
/// The service behind both bindings. Every lookup is the suite's per-record SELECT (<see cref="RecordLookup"/>), or in
/// <see cref="ServerWork.Range"/> one range query per call;
/// lookups come from a fixed pool of connections, so concurrent calls wait for a connection instead of opening
/// more. The gRPC service answers from the same <see cref="LookUpAsync(int, int, bool, CancellationToken)"/>. <see cref="GetRecords"/> looks the IDs up one after another; <see cref="GetRecordsConcurrently"/> spreads
/// them over up to <c>concurrency</c> connections at once and gathers them in order (the Web Service (Async) part's server change).
/// Bad arguments are faults whose reason is a coded message (<c>IT1001: …</c>); the service goes on serving.
/// </summary>
public sealed class IntegrationTestsService : IIntegrationTestsService, IAsyncDisposable
{
    private readonly Channel<RecordLookup> _pool;
    private readonly List<RecordLookup> _all;
    private readonly int _concurrency;
    private readonly ServerWork _work;

    private IntegrationTestsService(List<RecordLookup> lookups, ServerWork work, int concurrency, int maxBatchRecords)
    {
        _all = lookups;
        _work = work;
        _concurrency = concurrency;
        MaxBatchRecords = maxBatchRecords;
        _pool = Channel.CreateBounded<RecordLookup>(lookups.Count);
        foreach (var lookup in lookups)
            _pool.Writer.TryWrite(lookup);
    }

    /// <summary>The largest batch one call may ask for; beyond it the call is refused with a fault.</summary>
    public int MaxBatchRecords { get; }

    /// <param name="connections">Lookups (database connections) shared by all calls.</param>
    /// <param name="concurrency">Lookups one <see cref="GetRecordsConcurrently"/> call runs at once.</param>
    public static async Task<IntegrationTestsService> OpenAsync(RecordSource source, int connections, int concurrency, int maxBatchRecords,
        CancellationToken cancellationToken)
    {
        if (connections < 1 || concurrency < 1 || concurrency > connections || maxBatchRecords < 1)
            throw new IntegrationException(ErrorCodes.InvalidParameter,
                $"The service needs 1 ≤ concurrency ({concurrency}) ≤ connections ({connections}) and a batch limit of at least 1 ({maxBatchRecords}).");
        var lookups = new List<RecordLookup>();
        try
        {
            for (var i = 0; i < connections; i++)
                lookups.Add(await source.OpenLookupAsync(cancellationToken).ConfigureAwait(false));
        }
        catch
        {
            foreach (var lookup in lookups)
                await lookup.DisposeAsync().ConfigureAwait(false);
            throw;
        }
        return new IntegrationTestsService(lookups, source.Work, concurrency, maxBatchRecords);
    }

    public async Task<RecordData?> GetRecord(int id)
    {
        if (id < 1)
            throw Fault(ErrorCodes.InvalidParameter, $"An ID must be at least 1 (was {id}).");
        return (await AsFaults(LookUpAsync(id, 1, concurrently: false, CancellationToken.None)).ConfigureAwait(false)).SingleOrDefault();
    }

    public Task<RecordData[]> GetRecords(int firstId, int count) => AsFaults(LookUpAsync(firstId, count, concurrently: false, CancellationToken.None));

    public Task<RecordData[]> GetRecordsConcurrently(int firstId, int count) => AsFaults(LookUpAsync(firstId, count, concurrently: true, CancellationToken.None));

    private static async Task<RecordData[]> AsFaults(Task<ServiceRecord[]> lookup)
    {
        try
        {
            return (await lookup.ConfigureAwait(false)).Select(r => r.ToData()).ToArray();
        }
        catch (IntegrationException e)
        {
            throw Fault(e.Code, e.Message);
        }
    }

    /// <summary>
    /// The records of IDs firstId..firstId + count - 1 that exist, in ID order: looked up one after another, or spread over
    /// up to <c>concurrency</c> pooled connections at once. What every family's service calls.
    /// </summary>
    /// <exception cref="IntegrationException">IT1001 for a range the service does not take.</exception>
    public async Task<ServiceRecord[]> LookUpAsync(int firstId, int count, bool concurrently, CancellationToken cancellationToken)
    {
        Check(firstId, count);
        if (_work == ServerWork.Range)
            return await ReadRangeAsync(firstId, count, cancellationToken).ConfigureAwait(false);
        var found = new ServiceRecord?[count];
        var workers = concurrently ? Math.Min(_concurrency, count) : 1;
        var lookups = new List<RecordLookup>(workers);
        try
        {
            // Take what the pool can give now (at least one), so concurrent calls share the connections instead of queueing whole.
            lookups.Add(await _pool.Reader.ReadAsync(cancellationToken).ConfigureAwait(false));
            while (lookups.Count < workers && _pool.Reader.TryRead(out var more))
                lookups.Add(more);
            // Worker k looks up positions k, k + n, k + 2n…: every lookup started without waiting for the others' results.
            await Task.WhenAll(lookups.Select((lookup, k) => LookUpAsync(lookup, firstId, found, k, lookups.Count, cancellationToken))).ConfigureAwait(false);
        }
        finally
        {
            foreach (var lookup in lookups)
                _pool.Writer.TryWrite(lookup);
        }
        // An unknown ID is left out; the client's verification reports it as missing.
        return found.OfType<ServiceRecord>().ToArray();
    }

    /// <summary>Range mode: one range query on one pooled connection, whichever operation was called (a scan has nothing to spread).</summary>
    private async Task<ServiceRecord[]> ReadRangeAsync(int firstId, int count, CancellationToken cancellationToken)
    {
        var lookup = await _pool.Reader.ReadAsync(cancellationToken).ConfigureAwait(false);
        try
        {
            var records = new List<ServiceRecord>(count);
            await foreach (var record in lookup.ReadAsync(firstId, count, cancellationToken).ConfigureAwait(false))
                records.Add(record);
            return records.ToArray();
        }
        finally
        {
            _pool.Writer.TryWrite(lookup);
        }
    }

    private static async Task LookUpAsync(RecordLookup lookup, int firstId, ServiceRecord?[] found, int start, int step, CancellationToken cancellationToken)
    {
        for (var i = start; i < found.Length; i += step)
            found[i] = await lookup.FindAsync(firstId + i, cancellationToken).ConfigureAwait(false);
    }

    private void Check(int firstId, int count)
    {
        if (firstId < 1)
            throw new IntegrationException(ErrorCodes.InvalidParameter, $"firstId must be at least 1 (was {firstId}).");
        if (count < 1 || count > MaxBatchRecords)
            throw new IntegrationException(ErrorCodes.InvalidParameter, $"count must be between 1 and {MaxBatchRecords:N0} (was {count:N0}).");
        if ((long)firstId + count - 1 > int.MaxValue)
            throw new IntegrationException(ErrorCodes.InvalidParameter, $"The range {firstId} + {count} goes past the largest ID.");
    }

    public static FaultException Fault(string code, string message) => new(new FaultReason(CodedError.Format(code, message)), new FaultCode("Client"), "");

    public async ValueTask DisposeAsync()
    {
        _pool.Writer.TryComplete();
        foreach (var lookup in _all)
            await lookup.DisposeAsync().ConfigureAwait(false);
    }
}
