using System.ServiceModel;
using System.Threading.Channels;
using IntegrationTasks.Common;
using IntegrationTasks.Data;

namespace IntegrationTasks.Wcf;

/// <summary>
/// The service behind both bindings. Every lookup is the suite's per-record SELECT (<see cref="RecordLookup"/>);
/// lookups come from a fixed pool of connections, so concurrent calls wait for a connection instead of opening
/// more. <see cref="GetRecords"/> looks the IDs up one after another; <see cref="GetRecordsConcurrently"/> spreads
/// them over up to <c>concurrency</c> connections at once and gathers them in order (seed 000's server change).
/// Bad arguments are faults whose reason is a coded message (<c>IT1001: …</c>); the service goes on serving.
/// </summary>
public sealed class IntegrationTestsService : IIntegrationTestsService, IAsyncDisposable
{
    private readonly Channel<RecordLookup> _pool;
    private readonly List<RecordLookup> _all;
    private readonly int _concurrency;

    private IntegrationTestsService(List<RecordLookup> lookups, int concurrency, int maxBatchRecords)
    {
        _all = lookups;
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
    public static async Task<IntegrationTestsService> OpenAsync(Database database, int connections, int concurrency, int maxBatchRecords,
        CancellationToken cancellationToken)
    {
        if (connections < 1 || concurrency < 1 || concurrency > connections || maxBatchRecords < 1)
            throw new IntegrationException(ErrorCodes.InvalidParameter,
                $"The service needs 1 ≤ concurrency ({concurrency}) ≤ connections ({connections}) and a batch limit of at least 1 ({maxBatchRecords}).");
        var lookups = new List<RecordLookup>();
        try
        {
            for (var i = 0; i < connections; i++)
                lookups.Add(await RecordLookup.OpenAsync(database, cancellationToken).ConfigureAwait(false));
        }
        catch
        {
            foreach (var lookup in lookups)
                await lookup.DisposeAsync().ConfigureAwait(false);
            throw;
        }
        return new IntegrationTestsService(lookups, concurrency, maxBatchRecords);
    }

    public async Task<RecordData?> GetRecord(int id)
    {
        if (id < 1)
            throw Fault(ErrorCodes.InvalidParameter, $"An ID must be at least 1 (was {id}).");
        var lookup = await _pool.Reader.ReadAsync().ConfigureAwait(false);
        try
        {
            return await lookup.FindAsync(id, CancellationToken.None).ConfigureAwait(false) is { } record ? record.ToData() : null;
        }
        finally
        {
            _pool.Writer.TryWrite(lookup);
        }
    }

    public async Task<RecordData[]> GetRecords(int firstId, int count)
    {
        Check(firstId, count);
        var found = new RecordData?[count];
        var lookup = await _pool.Reader.ReadAsync().ConfigureAwait(false);
        try
        {
            await LookUpAsync(lookup, firstId, found, 0, 1).ConfigureAwait(false);
        }
        finally
        {
            _pool.Writer.TryWrite(lookup);
        }
        return Present(found);
    }

    public async Task<RecordData[]> GetRecordsConcurrently(int firstId, int count)
    {
        Check(firstId, count);
        var found = new RecordData?[count];
        var workers = Math.Min(_concurrency, count);
        var lookups = new List<RecordLookup>(workers);
        try
        {
            // Take what the pool can give now (at least one), so concurrent calls share the connections instead of queueing whole.
            lookups.Add(await _pool.Reader.ReadAsync().ConfigureAwait(false));
            while (lookups.Count < workers && _pool.Reader.TryRead(out var more))
                lookups.Add(more);
            // Worker k looks up positions k, k + n, k + 2n…: every lookup started without waiting for the others' results.
            await Task.WhenAll(lookups.Select((lookup, k) => LookUpAsync(lookup, firstId, found, k, lookups.Count))).ConfigureAwait(false);
        }
        finally
        {
            foreach (var lookup in lookups)
                _pool.Writer.TryWrite(lookup);
        }
        return Present(found);
    }

    private static async Task LookUpAsync(RecordLookup lookup, int firstId, RecordData?[] found, int start, int step)
    {
        for (var i = start; i < found.Length; i += step)
            found[i] = await lookup.FindAsync(firstId + i, CancellationToken.None).ConfigureAwait(false) is { } record ? record.ToData() : null;
    }

    /// <summary>An unknown ID is left out; the client's verification reports it as missing.</summary>
    private static RecordData[] Present(RecordData?[] found) => found.OfType<RecordData>().ToArray();

    private void Check(int firstId, int count)
    {
        if (firstId < 1)
            throw Fault(ErrorCodes.InvalidParameter, $"firstId must be at least 1 (was {firstId}).");
        if (count < 1 || count > MaxBatchRecords)
            throw Fault(ErrorCodes.InvalidParameter, $"count must be between 1 and {MaxBatchRecords:N0} (was {count:N0}).");
        if ((long)firstId + count - 1 > int.MaxValue)
            throw Fault(ErrorCodes.InvalidParameter, $"The range {firstId} + {count} goes past the largest ID.");
    }

    public static FaultException Fault(string code, string message) => new(new FaultReason(CodedError.Format(code, message)), new FaultCode("Client"), "");

    public async ValueTask DisposeAsync()
    {
        _pool.Writer.TryComplete();
        foreach (var lookup in _all)
            await lookup.DisposeAsync().ConfigureAwait(false);
    }
}
