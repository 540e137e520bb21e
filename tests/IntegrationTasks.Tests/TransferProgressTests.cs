using IntegrationTasks.Common;
using IntegrationTasks.Transfer;

namespace IntegrationTasks.Tests;

[TestClass]
[TestCategory("Unit")]
public sealed class TransferProgressTests
{
    [TestMethod]
    public void A_progress_line_says_batches_committed_of_the_total_the_rate_and_the_time_left()
    {
        var line = TransferProgress.Describe("TcpClient2", BatchPlan.Create(50, 1000), 12_000, TimeSpan.FromSeconds(4));
        Assert.AreEqual("TcpClient2: 12 of 50 batches committed (12,000 of 50,000 records), 3,000 records/s, 4 s elapsed, about 13 s left.", line);
    }

    [TestMethod]
    public void Nothing_committed_yet_gives_no_estimate()
    {
        var line = TransferProgress.Describe("HttpRequest", BatchPlan.Create(2, 10), 0, TimeSpan.FromSeconds(5));
        Assert.AreEqual("HttpRequest: 0 of 2 batches committed (0 of 20 records), 0 records/s, 5 s elapsed.", line);
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

[TestClass]
[TestCategory("Unit")]
public sealed class RunProgressTests
{
    [TestMethod]
    public void A_progress_line_says_which_transport_of_how_many_and_estimates_the_time_left_from_the_runs_so_far()
    {
        // 3 transports × (20,000 + 50,000) × (10 + 1) = 2,310,000 records; 770,000 done in 100 s: 1,540,000 left, about 200 s.
        var line = IntegrationTasks.Results.RunProgressEstimate.Describe("TcpClient2", 2, 3, [20_000, 50_000], 10, warmup: true,
            plannedRecords: 2_310_000, recordsDone: 770_000, elapsed: TimeSpan.FromSeconds(100));
        Assert.AreEqual("RunAll: transport 2 of 3, TcpClient2: 20,000 + 50,000 records × 10 repetitions after a warm-up (22 runs); 1 min 40 s elapsed, about 3 min 20 s left (from the runs so far).", line);
        // Nothing done yet: no estimate; a peer (no place among the transports) is named alone.
        Assert.AreEqual("RunAll: Peer: SQLite ATTACH: 1,000 records × 2 repetitions (2 runs); 0 s elapsed.",
            IntegrationTasks.Results.RunProgressEstimate.Describe("Peer: SQLite ATTACH", 0, 0, [1_000], 2, warmup: false, 2_000, 0, TimeSpan.Zero));
    }
}

[TestClass]
[TestCategory("Unit")]
public sealed class EstimateRunAllTests
{
    [TestMethod]
    public void An_earlier_run_here_gives_the_plan_its_time_scaled_to_the_record_counts()
    {
        using var folder = new TempDirectory("it-estimate-");
        var measurements = Enumerable.Range(1, 3).SelectMany(r => new[]
        {
            new IntegrationTasks.Transfer.Measurement { Transport = "TcpClient2", Records = 20_000, Repetition = r, ElapsedSeconds = 2.0, Verified = true },
            new IntegrationTasks.Transfer.Measurement { Transport = "GrpcClient", Records = 20_000, Repetition = r, ElapsedSeconds = 1.0, Verified = true },
        }).ToList();
        IntegrationTasks.Results.ReportWriter.Write(folder, measurements, new Dictionary<string, string>());
        var results = Directory.GetFiles(folder, "results-*.json").Single();
        // TcpClient2 at 20,000 and 40,000 (scaled from 20,000: 4 s), 2 runs each; HttpRequest never measured there.
        var estimate = IntegrationTasks.Results.EstimateRunAll.Estimate([("TcpClient2", [20_000, 40_000]), ("HttpRequest", [20_000])], runsEach: 2, results);
        Assert.AreEqual((TimeSpan.FromSeconds((2.0 + 4.0) * 2), 1), estimate);
        Assert.IsNull(IntegrationTasks.Results.EstimateRunAll.Estimate([("HttpRequest", [20_000])], 2, results));
    }
}
