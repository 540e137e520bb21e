namespace IntegrationTasks.Tests;

[TestClass]
[TestCategory("Unit")]
public sealed class FaultTableTests
{
    internal static Measurement Run(string transport, int repetition, double seconds, int? reconnects = null, double? recovery = null,
        string? failedWith = null, int? committed = null, int? matched = 1000, int? duplicated = 0) => new()
    {
        Transport = transport, Records = 1000, BatchSize = 100, Repetition = repetition, ElapsedSeconds = seconds, Verified = true, Fault = "Reset",
        Reconnects = reconnects, RecoverySeconds = recovery, FailedWith = failedWith, RecordsCommitted = committed, RowsMatched = matched, RowsDuplicated = duplicated,
    };

    [TestMethod]
    public void Each_transport_under_each_fault_gets_its_outcome_its_losses_and_its_recovery_and_failed_runs_stay_out_of_the_ranking()
    {
        Measurement[] runs =
        [
            Run("TcpClient2", 0, 9.0, reconnects: 1, recovery: 5.0) with { Warmup = true },
            Run("TcpClient2", 1, 1.0, reconnects: 1, recovery: 0.2),
            Run("TcpClient2", 2, 1.2, reconnects: 1, recovery: 0.4),
            Run("TcpClientSingleThreadTest", 1, 0.5, reconnects: 0, failedWith: "IT3006", committed: 300, matched: 300),
            Run("TcpClientSingleThreadTest", 2, 0.6, reconnects: 0, failedWith: "IT3006", committed: 500, matched: 500),
            Run("GrpcStreaming", 1, 2.0, reconnects: 0),
            Run("HttpRequest", 1, 1.5, reconnects: 1, recovery: 0.3, matched: 999),
            Run("FileTransferRequest", 1, 0.4) with { Fault = null },
        ];
        var rows = FaultRuns.Rows(runs).ToDictionary(r => r.Transport);
        Assert.HasCount(4, rows, "the warm-up and the run without a fault are not in it");
        var tcp2 = rows["TcpClient2"];
        Assert.AreEqual(("resumed", 2, 0, 0), (tcp2.Outcome, tcp2.Runs, tcp2.RowsLost, tcp2.RowsDuplicated));
        Assert.AreEqual(0.3, tcp2.RecoverySeconds!.Mean, 1e-12);
        var tcp1 = rows["TcpClientSingleThreadTest"];
        Assert.AreEqual(("failed cleanly (IT3006)", 2, 800, 0), (tcp1.Outcome, tcp1.FailedCleanly, tcp1.RecordsCommittedWhenFailed, tcp1.RowsLost));
        Assert.IsNull(tcp1.Seconds, "a failed run has no time to rank");
        Assert.AreEqual("rode it out (no break)", rows["GrpcStreaming"].Outcome);
        Assert.AreEqual(1, rows["HttpRequest"].RowsLost, "a row verification did not find is a row lost, and shows");
        var markdown = FaultTable.Markdown([.. rows.Values]);
        var failed = MarkdownTable.With(markdown, "Outcome").Row("TcpClientSingleThreadTest");
        Assert.AreEqual(("Reset", "1,000", "2", "0", "0", "–", "–"),
            (failed["Fault"], failed["Records"], failed["Runs"], failed["Rows lost"], failed["Rows duplicated"], failed["Time to recover (s)"], failed["Mean time (s)"]));
        StringAssert.StartsWith(failed["Outcome"], "failed cleanly (IT3006); 400 records committed");
        StringAssert.Contains(FaultTable.Html([.. rows.Values]), "<tr class=\"bad\"><td>HttpRequest</td>");
        // The ranking is of completed runs only.
        using var directory = new TempDirectory("it-faults-");
        IntegrationTasks.Exporters.ReportFiles.Write(directory, runs, new Dictionary<string, string>());
        var results = ResultsJson.Load(directory);
        Assert.IsFalse(results.HasRow("TcpClientSingleThreadTest"), "a transport whose every run failed is not ranked");
        Assert.IsTrue(results.HasRow("TcpClient2"));
    }

    [TestMethod]
    public void A_run_whose_fault_never_landed_is_reported_as_not_injected_never_as_ridden_out()
    {
        // The walk-through's case: -p:Fault=Reset at 2,000 records moves less than FaultAfterBytes, and the table said "rode it out".
        Measurement[] runs =
        [
            Run("TcpClient2", 1, 0.2) with { FaultInjected = false, FaultAfterBytes = 1_000_000, FaultBytesFromServer = 612_345 },
            Run("TcpClient2", 2, 0.2) with { FaultInjected = false, FaultAfterBytes = 1_000_000, FaultBytesFromServer = 611_000 },
            Run("GrpcClient", 1, 0.3, reconnects: 1, recovery: 0.1) with { FaultInjected = true },
            Run("GrpcClient", 2, 0.2) with { FaultInjected = false, FaultAfterBytes = 1_000_000, FaultBytesFromServer = 999_999 },
        ];
        var rows = FaultRuns.Rows(runs).ToDictionary(r => r.Transport);
        StringAssert.StartsWith(rows["TcpClient2"].Outcome, "not injected in 2 of 2 (");
        StringAssert.Contains(rows["TcpClient2"].Outcome, "at most 612,345 bytes");
        Assert.AreEqual((0, 0, 0), (rows["TcpClient2"].Resumed, rows["TcpClient2"].Unbroken, rows["TcpClient2"].FailedCleanly));
        StringAssert.StartsWith(rows["GrpcClient"].Outcome, "resumed; not injected in 1 of 2 (");
        StringAssert.Contains(rows["GrpcClient"].Outcome, "at most 999,999 bytes");
        Assert.DoesNotContain("rode it out", FaultTable.Markdown([.. rows.Values]));
    }
}
