namespace IntegrationTasks.Tests;

[TestClass]
[TestCategory("Unit")]
public sealed class WcfBatchCallsTests
{
    /// <summary>
    /// A channel whose first call fails once the others are waiting, and whose other calls end only when it is aborted — as a call sent
    /// just as a killed server's session ended did (RunAll under KillServer waited minutes on one).
    /// </summary>
    private sealed class SessionEndedService(int othersInFlight) : IIntegrationTestsClient
    {
        private readonly TaskCompletionSource _aborted = new(TaskCreationOptions.RunContinuationsAsynchronously);
        private readonly CountdownEvent _othersWaiting = new(othersInFlight);

        public bool Aborted => _aborted.Task.IsCompleted;

        public void Abort() => _aborted.TrySetResult();

        public RecordData? GetRecord(int id) => throw new NotSupportedException();
        public RecordData[] GetRecords(int firstId, int count) => GetRecordsAsync(firstId, count).GetAwaiter().GetResult();
        public RecordData[] GetRecordsConcurrently(int firstId, int count) => GetRecords(firstId, count);
        public Task<RecordData[]> GetRecordsConcurrentlyAsync(int firstId, int count) => GetRecordsAsync(firstId, count);

        public async Task<RecordData[]> GetRecordsAsync(int firstId, int count)
        {
            if (firstId == 1)
            {
                await Task.Run(() => _othersWaiting.Wait(TimeSpan.FromSeconds(10)));
                throw new System.ServiceModel.CommunicationException("The server did not provide a meaningful reply (the session ended).");
            }
            _othersWaiting.Signal();
            await _aborted.Task;
            throw new System.ServiceModel.CommunicationObjectAbortedException("The channel was aborted.");
        }
    }

    [TestMethod]
    [DataRow(WcfVariant.SmallBatchesAsync)]
    [DataRow(WcfVariant.SmallBatchesAsyncSyncServer)]
    [DataRow(WcfVariant.SmallBatchesTask)]
    [DataRow(WcfVariant.SmallBatchesMultiThread)]
    public async Task The_first_failed_call_aborts_the_channel_so_calls_left_waiting_end_with_it(WcfVariant variant)
    {
        await using var databases = TestDatabases.Sqlite();
        await using var importer = await BatchImporter.OpenAsync(databases.Client, CancellationToken.None);
        var plan = new BatchPlan(8, 10);
        var service = new SessionEndedService(othersInFlight: 3);
        var calls = new BatchCalls(service, service.Abort, plan, new SerialImporter(importer), new ResumingTransfer(plan, NullEventLog.Instance));
        var run = calls.RunAsync(variant, Enumerable.Range(0, plan.TotalBatches).ToList(), maxInFlight: 4, CancellationToken.None);
        // Without the abort the three waiting calls (and so the attempt) would last until WCF's call timeout.
        var e = await Assert.ThrowsAsync<System.ServiceModel.CommunicationException>(() => run.WaitAsync(TimeSpan.FromSeconds(20)));
        StringAssert.Contains(e.Message, "meaningful reply", "the first failure is the one reported");
        Assert.IsTrue(service.Aborted);
    }

    /// <summary>Records the thread pool's minimum while a synchronous call is in progress.</summary>
    private sealed class MinimumRecordingService : IIntegrationTestsClient
    {
        private int _lowestMinimum = int.MaxValue;

        public int LowestMinimumDuringCalls => Volatile.Read(ref _lowestMinimum);

        public RecordData? GetRecord(int id) => throw new NotSupportedException();

        public RecordData[] GetRecords(int firstId, int count)
        {
            ThreadPool.GetMinThreads(out var workers, out _);
            InterlockedMin(ref _lowestMinimum, workers);
            return Enumerable.Range(firstId, count).Select(id => new RecordData { Id = id, Desc = "d", CreationDate = new DateTime(2014, 1, 2, 3, 4, 5, DateTimeKind.Utc) }).ToArray();
        }

        public RecordData[] GetRecordsConcurrently(int firstId, int count) => GetRecords(firstId, count);
        public Task<RecordData[]> GetRecordsAsync(int firstId, int count) => Task.FromResult(GetRecords(firstId, count));
        public Task<RecordData[]> GetRecordsConcurrentlyAsync(int firstId, int count) => GetRecordsAsync(firstId, count);

        private static void InterlockedMin(ref int location, int value)
        {
            for (var seen = Volatile.Read(ref location); value < seen; seen = Volatile.Read(ref location))
            {
                if (Interlocked.CompareExchange(ref location, value, seen) == seen)
                    return;
            }
        }
    }

    /// <summary>
    /// The Task variants block a pool thread per batch in flight in a synchronous call, and each run
    /// waited for the pool to grow again (far slower and more scattered than with the pool's minimum raised).
    /// </summary>
    [TestMethod]
    [DoNotParallelize]
    public async Task The_task_variant_raises_the_pools_minimum_by_its_calls_in_flight_while_it_runs_and_restores_it()
    {
        ThreadPool.GetMinThreads(out var before, out var completionsBefore);
        await using var databases = TestDatabases.Sqlite();
        await databases.Client.EnsureSchemaAsync(CancellationToken.None);
        await using var importer = await BatchImporter.OpenAsync(databases.Client, CancellationToken.None);
        var plan = new BatchPlan(40, 10);
        var service = new MinimumRecordingService();
        var calls = new BatchCalls(service, () => { }, plan, new SerialImporter(importer), new ResumingTransfer(plan, NullEventLog.Instance));

        await calls.RunAsync(WcfVariant.SmallBatchesTask, Enumerable.Range(0, plan.TotalBatches).ToList(), maxInFlight: 6, CancellationToken.None)
            .WaitAsync(TimeSpan.FromSeconds(30));

        Assert.IsGreaterThanOrEqualTo(before + 6, service.LowestMinimumDuringCalls, "every call ran with six more threads kept ready");
        ThreadPool.GetMinThreads(out var after, out var completionsAfter);
        Assert.AreEqual(before, after, "the minimum is back to what it was");
        Assert.AreEqual(completionsBefore, completionsAfter);
        Assert.AreEqual(0, ThreadPoolReservation.ReservedThreads);
    }

    [TestMethod]
    [DoNotParallelize]
    public void Reservations_held_at_once_add_up_and_the_minimum_returns_when_the_last_ends()
    {
        ThreadPool.GetMinThreads(out var before, out _);
        var first = ThreadPoolReservation.Reserve(8);
        var second = ThreadPoolReservation.Reserve(4);
        ThreadPool.GetMinThreads(out var both, out _);
        first.Dispose();
        first.Dispose();
        ThreadPool.GetMinThreads(out var one, out _);
        second.Dispose();
        ThreadPool.GetMinThreads(out var none, out _);

        Assert.AreEqual(before + 12, both);
        Assert.AreEqual(before + 4, one, "disposing twice gives back its threads once");
        Assert.AreEqual(before, none);
    }
}
