namespace IntegrationTasks.Tests;

[TestClass]
[TestCategory("Unit")]
public sealed class TransferProgressTests
{
    [TestMethod]
    public void A_progress_line_says_batches_committed_of_the_total_the_rate_and_the_time_left()
    {
        var line = TransferProgress.Describe("TcpClient2", BatchPlan.Create(50, 1000), 12_000, TimeSpan.FromSeconds(4));
        StringAssert.StartsWith(line, "TcpClient2: 12 of 50 batches committed");
        StringAssert.Contains(line, "(12,000 of 50,000 records)");
        StringAssert.EndsWith(line, ", 3,000 records/s, 4 s elapsed, about 13 s left.");
    }

    [TestMethod]
    public void Nothing_committed_yet_gives_no_estimate()
    {
        var line = TransferProgress.Describe("HttpRequest", BatchPlan.Create(2, 10), 0, TimeSpan.FromSeconds(5));
        StringAssert.StartsWith(line, "HttpRequest: 0 of 2 batches committed (0 of 20 records)");
        StringAssert.EndsWith(line, ", 0 records/s, 5 s elapsed.");
    }

    [TestMethod]
    [Timeout(20_000, CooperativeCancellation = true)]
    public async Task A_run_reports_while_it_goes_and_stops_reporting_when_disposed()
    {
        var log = new SignallingLog();
        var records = 0L;
        var progress = new TransferProgress("GrpcClient", BatchPlan.Create(10, 100), () => Interlocked.Read(ref records), log,
            TimeSpan.FromMilliseconds(20));
        Interlocked.Exchange(ref records, 300);
        var first = await log.NextLine.WaitAsync(TimeSpan.FromSeconds(10)); // the first tick's line, whenever it comes
        StringAssert.StartsWith(first, "GrpcClient: ");
        await progress.DisposeAsync();
        var count = log.Count;
        await Task.Yield();
        Assert.AreEqual(count, log.Count, "no line after the run ended");
    }

    [TestMethod]
    public async Task A_zero_interval_prints_nothing()
    {
        var log = new SignallingLog();
        await new TransferProgress("X", BatchPlan.Create(1, 1), () => 0, log, TimeSpan.Zero).DisposeAsync();
        Assert.AreEqual(0, log.Count);
    }

    private sealed class SignallingLog : IEventLog
    {
        private readonly TaskCompletionSource<string> _first = new(TaskCreationOptions.RunContinuationsAsynchronously);
        private int _count;
        public Task<string> NextLine => _first.Task;
        public int Count => Volatile.Read(ref _count);
        public void Info(string message) { Interlocked.Increment(ref _count); _first.TrySetResult(message); }
        public void Detail(string message) => Info(message);
        public void Warning(string code, string message) => Info(message);
        public void Error(string code, string message) => Info(message);
    }
}
