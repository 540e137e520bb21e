namespace IntegrationTasks.Tests;

/// <summary>A report row is keyed by what its runs are (fields); its label is made from the key, never read back.</summary>
[TestClass]
[TestCategory("Unit")]
public sealed class RowKeyTests
{
    private static Measurement Run(string transport, int clients = 1, int batchSize = 100, double? latencyMs = null, RunKind? kind = null, double? rate = null) =>
        new() { Transport = transport, Records = 1000, ElapsedSeconds = 1, Clients = clients, BatchSize = batchSize, LatencyMs = latencyMs, Kind = kind, Rate = rate, Verified = true };

    [TestMethod]
    public void Runs_are_keyed_by_their_fields_and_a_sweep_s_batch_size_or_round_trip_is_a_key_field_only_where_it_varied()
    {
        var keyed = RowKey.Of(
        [
            Run("TcpClient2", batchSize: 100), Run("TcpClient2", batchSize: 500), Run("GrpcClient", latencyMs: 0), Run("GrpcClient", latencyMs: 20),
            Run("RestJson", clients: 4, rate: 50), Run("RestJson", clients: 4, rate: 50),
        ]);
        CollectionAssert.AreEqual(new[]
        {
            new RowKey("TcpClient2", RunKind.Transport, BatchSize: 100), new RowKey("TcpClient2", RunKind.Transport, BatchSize: 500),
            new RowKey("GrpcClient", RunKind.Transport, LatencyMs: 0), new RowKey("GrpcClient", RunKind.Transport, LatencyMs: 20),
            new RowKey("RestJson", RunKind.Transport, Clients: 4, Rate: 50), new RowKey("RestJson", RunKind.Transport, Clients: 4, Rate: 50),
        }, keyed.Select(k => k.Key).ToArray());
        CollectionAssert.AreEqual(new[] { "TcpClient2 (batch 100)", "GrpcClient (RTT 20 ms)", "RestJson (4 clients, open loop 50/s each)" },
            new[] { keyed[0].Key.Label, keyed[3].Key.Label, keyed[4].Key.Label });
    }

    [TestMethod]
    public void Each_payload_size_is_a_table_of_its_own_measured_against_the_reference_at_that_size()
    {
        Measurement At(string transport, int? payload, double seconds, RunKind kind = RunKind.Transport) =>
            Run(transport, kind: kind) with { PayloadBytes = payload, ElapsedSeconds = seconds };
        var rows = ReportContent.Summarise(
        [
            At("TcpClient2", null, 1), At("PipelinedCopy", null, 0.5, RunKind.Reference),
            At("TcpClient2", 1 << 20, 4), At("PipelinedCopy", 1 << 20, 2, RunKind.Reference),
        ]);
        CollectionAssert.AreEqual(new[] { new RunSize(1000, 0), new RunSize(1000, 1 << 20, "Bytes") }, rows.Select(r => r.Size).Distinct().ToArray());
        var large = rows.Single(r => r.Key == new RowKey("TcpClient2", RunKind.Transport, PayloadBytes: 1 << 20, PayloadKind: "Bytes"));
        Assert.AreEqual((2.0, 262.144), (large.RatioToPipelined!.Value, Math.Round(large.PayloadMegabytesPerSecond!.Value, 3)));
        Assert.IsNull(rows.Single(r => r.Key == new RowKey("TcpClient2", RunKind.Transport)).PayloadMegabytesPerSecond);
        Assert.AreEqual(("TcpClient2", "1,000 records of 1 MiB payload", "1000-p1048576"), (large.Key.Label, large.Size.Heading, large.Size.Id));
        CollectionAssert.Contains(ReportContent.Labelled([At("TcpClient2", null, 1), At("TcpClient2", 1 << 20, 4)]).Select(m => m.Transport).ToList(), "TcpClient2 (payload 1 MiB)");
        Assert.AreEqual(("1,000 B", "64 KiB"), (RunKey.PayloadSize(1000), RunKey.PayloadSize(65536)));
        // A row and its key print as records do: WithoutPayload, a property once, made a new key each time it was printed, without end.
        StringAssert.Contains(large.Key.ToString(), "PayloadBytes = 1048576");
        StringAssert.Contains(large.ToString(), "Transport = TcpClient2");
        // Text is a table of its own, apart from bytes of the same size.
        Assert.AreEqual(("1000-t1024", "1,000 records of 1 KiB text payload"), (new RunSize(1000, 1024, "Text").Id, new RunSize(1000, 1024, "Text").Heading));
    }

    [TestMethod]
    public void The_report_names_the_leader_at_each_payload_size_and_the_rank_that_moves_most()
    {
        Measurement At(string transport, int? payload, double seconds, RunKind kind = RunKind.Transport) =>
            Run(transport, kind: kind) with { PayloadBytes = payload, ElapsedSeconds = seconds };
        // TcpClient2 leads small rows and falls behind with large ones; GrpcClient the other way; RestJson stays in the middle.
        var rows = ReportContent.Summarise(
        [
            At("TcpClient2", null, 1), At("RestJson", null, 2), At("GrpcClient", null, 3), At("PipelinedCopy", null, 0.5, RunKind.Reference),
            At("TcpClient2", 1024, 1.5), At("RestJson", 1024, 2.5), At("GrpcClient", 1024, 2.6), At("PipelinedCopy", 1024, 0.6, RunKind.Reference),
            At("TcpClient2", 1 << 20, 9), At("RestJson", 1 << 20, 6), At("GrpcClient", 1 << 20, 4), At("PipelinedCopy", 1 << 20, 3, RunKind.Reference),
        ]);
        CollectionAssert.AreEqual(new[] { (0, "TcpClient2"), (1024, "TcpClient2"), (1 << 20, "GrpcClient") }, PayloadTrend.Leaders(rows));
        Assert.AreEqual(("TcpClient2", 1, 3, 3), PayloadTrend.MostMoved(rows));
        Assert.HasCount(2, PayloadTrend.Lines(rows));
        var points = PayloadTrend.MegabytesBySize(rows);
        Assert.HasCount(8, points, "the two sizes with a payload, four rows each");
        Assert.IsTrue(points.All(p => p.MegabytesPerSecond > 0 && p.Row.PayloadBytes == 0), string.Join("\n", points));
        var chart = IntegrationTasks.Exporters.HtmlReport.PayloadChart(rows);
        Assert.AreEqual(4, System.Text.RegularExpressions.Regex.Count(chart, "<polyline "), "a line per transport and the reference");
        Assert.AreEqual(1, System.Text.RegularExpressions.Regex.Count(chart, "stroke-dasharray"), "the reference dashed");
        // One payload size: nothing about size.
        Assert.IsEmpty(PayloadTrend.Lines(ReportContent.Summarise([At("TcpClient2", null, 1), At("RestJson", null, 2)])));
    }

    [TestMethod]
    public void A_run_s_recorded_kind_decides_and_older_results_are_told_by_the_transport_s_name()
    {
        // A transport whose name looks like a label, or like the peer's, is what its recorded kind says.
        var odd = Run("Peer: my (own) transport", clients: 2, kind: RunKind.Transport);
        var rows = ReportContent.Summarise([odd, Run("PipelinedCopy", clients: 2, kind: RunKind.Reference)]);
        var row = rows.Single(r => r.Key.Transport == "Peer: my (own) transport");
        Assert.AreEqual((RunKind.Transport, 2, false), (row.Key.Kind, row.Key.Clients, row.IsPeer));
        Assert.AreEqual("PipelinedCopy", row.Reference);
        Assert.IsNotNull(row.PairedRatioToPipelined ?? (object?)row.RatioToPipelined, "measured against the reference at its concurrency");
        CollectionAssert.AreEqual(new[] { RunKind.Baseline, RunKind.Reference, RunKind.Reference, RunKind.Peer, RunKind.Transport },
            new[] { "DirectCopy", "PipelinedCopy", "PipelinedCopyRange", "Peer: SQLite ATTACH", "TcpClient2" }.Select(t => RowKey.KindOf(Run(t))).ToArray());
    }
}
