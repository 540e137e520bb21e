using Microsoft.Build.Framework;
using Microsoft.Build.Utilities;

namespace IntegrationTasks.Tests;

/// <summary>Tls=false+true: a plaintext pass and a TLS pass of one plan, and what TLS costs each transport side by side.</summary>
[TestClass]
[TestCategory("Unit")]
public sealed class TlsAxisTests
{
    private static TaskItem Item(string name, string server, params (string Name, string Value)[] metadata)
    {
        var item = new TaskItem(name);
        item.SetMetadata("RecordCounts", "1000");
        item.SetMetadata("ServerTarget", server);
        foreach (var (key, value) in metadata)
            item.SetMetadata(key, value);
        return item;
    }

    private static Dictionary<string, string> Properties(ITaskItem item) =>
        item.GetMetadata("AdditionalProperties").Split(';').Select(p => p.Split('=', 2)).ToDictionary(p => p[0], p => p[1]);

    [TestMethod]
    public void The_TLS_pass_follows_the_plaintext_one_with_the_transports_that_carry_TLS_and_the_reference()
    {
        var engine = new FakeBuildEngine();
        var task = new PlanRunAll
        {
            BuildEngine = engine, BatchSize = 500, Repetitions = 2, Warmup = false, Seed = "7", Tls = "false+true",
            Transports =
            [
                Item("TcpClient2", "TcpServer2", ("Tls", "true")), Item("FileTransferRequest", "FileTransferTestServer"),
                Item("PipelinedCopy", "", ("Reference", "true")),
            ],
        };
        Assert.IsTrue(task.Execute(), engine.Log);
        var steps = task.Steps.Select(s => (Kind: s.GetMetadata("Kind"), Group: int.Parse(s.GetMetadata("Group")), s.ItemSpec, Properties: Properties(s))).ToList();
        var runs = steps.Where(s => s.Kind == "Run").GroupBy(s => s.Properties["Tls"])
            .ToDictionary(g => g.Key, g => g.Select(s => s.Properties["Transport"]).Order().ToArray());
        CollectionAssert.AreEqual(new[] { "FileTransferRequest", "FileTransferRequest", "PipelinedCopy", "PipelinedCopy", "TcpClient2", "TcpClient2" }, runs["false"]);
        CollectionAssert.AreEqual(new[] { "PipelinedCopy", "PipelinedCopy", "TcpClient2", "TcpClient2" }, runs["true"]);
        // Each pass its own group: its servers start with its Tls and stop before the next pass's start.
        var servers = steps.Where(s => s.Kind == "Server").Select(s => (s.ItemSpec, s.Group, Tls: s.Properties["Tls"])).ToList();
        CollectionAssert.AreEqual(new[] { ("FileTransferTestServer", 1, "false"), ("TcpServer2", 1, "false"), ("TcpServer2", 2, "true") }, servers.OrderBy(s => s.Group).ThenBy(s => s.ItemSpec).ToArray());
        Assert.IsTrue(steps.Where(s => s.Properties["Tls"] == "true").All(s => s.Group == 2));
    }

    [TestMethod]
    public void One_setting_plans_as_before_and_a_bad_one_is_IT1001()
    {
        var engine = new FakeBuildEngine();
        var plain = new PlanRunAll { BuildEngine = engine, BatchSize = 500, Repetitions = 1, Warmup = false, Seed = "7", Transports = [Item("TcpClient2", "TcpServer2", ("Tls", "true"))] };
        Assert.IsTrue(plain.Execute(), engine.Log);
        Assert.IsTrue(plain.Steps.All(s => !Properties(s).ContainsKey("Tls")));
        CollectionAssert.AreEqual(new[] { false, true }, TlsSetting.Values("false+true"));
        CollectionAssert.AreEqual(new[] { true, false }, TlsSetting.Values("true;false"));
        CollectionAssert.AreEqual(new[] { false }, TlsSetting.Values(""));
        Assert.AreEqual(ErrorCodes.InvalidParameter, Assert.ThrowsExactly<IntegrationException>(() => TlsSetting.Values("false+yes")).Code);
    }

    private static IEnumerable<Measurement> Runs(string transport, bool tls, DateTimeOffset start, params double[] seconds) =>
        seconds.Select((s, i) => new Measurement
        {
            Transport = transport, Records = 20_000, BatchSize = 1000, Repetition = i + 1, ElapsedSeconds = s, Verified = true, Tls = tls ? true : null,
            RoundSeed = 7, Timestamp = start.AddSeconds(10 * i + (transport == "PipelinedCopy" ? 5 : 0)),
            Kind = transport == "PipelinedCopy" ? RunKind.Reference : RunKind.Transport,
        });

    [TestMethod]
    public void Each_transport_with_both_rows_has_its_TLS_cost_against_its_own_passs_reference()
    {
        var plainStart = DateTimeOffset.Parse("2026-11-28T10:00:00Z", System.Globalization.CultureInfo.InvariantCulture);
        var tlsStart = plainStart.AddHours(1);
        // The TLS pass met a machine 10 % slower (its reference too): the paired ratio takes that out, the ratio of means does not.
        var runs = Runs("PipelinedCopy", false, plainStart, 1.0, 1.0, 1.0).Concat(Runs("PipelinedCopy", true, tlsStart, 1.1, 1.1, 1.1))
            .Concat(Runs("RestJson", false, plainStart, 2.0, 2.0, 2.0)).Concat(Runs("RestJson", true, tlsStart, 2.64, 2.64, 2.64))
            .Concat(Runs("FileTransferRequest", false, plainStart, 3.0, 3.0, 3.0)).ToList();
        var summaries = Summaries.Of(runs);
        CollectionAssert.AreEquivalent(new[] { "PipelinedCopy", "PipelinedCopy (TLS pass)", "RestJson", "RestJson (TLS)", "FileTransferRequest" },
            summaries.Select(s => s.Transport).ToArray());
        Assert.AreEqual(2.4, summaries.Single(s => s.Transport == "RestJson (TLS)").PairedRatioToPipelined!.Mean, 1e-9, "paired with its own pass's reference");
        var cost = TlsCost.Of(summaries).Single();
        Assert.AreEqual("RestJson", cost.Transport);
        Assert.AreEqual(1.32, cost.Ratio, 1e-9);
        Assert.AreEqual(1.2, cost.PairedRatio!.Value, 1e-9);
        Assert.AreEqual(32.0, cost.MicrosPerRecord, 1e-9);

        using var folder = new TempDirectory("it-tls-report-");
        IntegrationTasks.Exporters.ReportFiles.Write(folder, runs, new Dictionary<string, string> { ["CPU"] = "test" }, new ReportOptions());
        var table = MarkdownTable.With(File.ReadAllText(Path.Combine(folder, "results.md")), "Paired TLS × plaintext");
        CollectionAssert.AreEqual(new[] { "RestJson", "2.000", "2.640", "1.32", "1.20 ±0.00", "32.0", "0.0 → 0.0", "–", "–" }, table.Rows.Single().ToArray());
    }
}
