using IntegrationTasks.Common;
using IntegrationTasks.Transfer;
using IntegrationTasks.Wcf;

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
}
