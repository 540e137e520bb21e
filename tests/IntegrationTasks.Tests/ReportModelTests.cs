using System.Collections;
using System.Reflection;

namespace IntegrationTasks.Tests;

/// <summary>
/// The report's model is data — numbers, keys, verdicts, plain sentences — and the exporters render it: no Markdown or HTML is made
/// before an exporter asks for it.
/// </summary>
[TestClass]
[TestCategory("Unit")]
public sealed partial class ReportModelTests
{
    private static Measurement Run(string transport, RunKind kind, double seconds, int repetition, int batchSize = 1000, int clients = 1) => new()
    {
        Transport = transport, Kind = kind, Records = 20_000, BatchSize = batchSize, Clients = clients, Repetition = repetition, ElapsedSeconds = seconds,
        Verified = true, RoundSeed = 7, ServerWork = "PerRecord", BatchLatency = new LatencySummary { Batches = 20, P50Ms = 1, P90Ms = 2, P99Ms = 3, P999Ms = 4, MaxMs = 5 },
        Timestamp = DateTimeOffset.UnixEpoch.AddSeconds(repetition * 10 + seconds),
    };

    /// <summary>A lab's results as a lab hands them over: data only, rendered by its section.</summary>
    private sealed class CountingSection : IReportSection
    {
        public int Order => 1;
        public object? Load(string directory) => new[] { 1.5, 2.5 };
        public ReportDocument Document(object results) => new ReportDocument().AddHeading(2, "Lab")
            .AddChart(new ReportBarChart("lab", "Lab", [.. ((double[])results).Select((v, i) => new ReportBar($"run {i}", v))], "F1"));
    }

    private static ReportModel Model()
    {
        var runs = new List<Measurement>();
        for (var r = 1; r <= 3; r++)
        {
            runs.Add(Run("PipelinedCopy", RunKind.Reference, 1.0 + r / 100.0, r));
            runs.Add(Run("TcpClient2", RunKind.Transport, 1.4 + r / 100.0, r));
            runs.Add(Run("TcpClient2", RunKind.Transport, 1.2 + r / 100.0, r, clients: 4));
            runs.Add(Run("GrpcClient", RunKind.Transport, 1.5 + r / 100.0, r, batchSize: 500));
            runs.Add(Run("GrpcClient", RunKind.Transport, 1.3 + r / 100.0, r, batchSize: 2000));
            runs.Add(Run("RestJson", RunKind.Transport, 1.6, r) with { Fault = "Reset", FaultInjected = true, ThroughRelay = true, Reconnects = 1 });
        }
        return ReportModel.Of(runs, new Dictionary<string, string> { ["CPU"] = "two cores" }, new ReportOptions
        {
            NotRun = [new NotRunEntry("MSMQ", "Windows only.", "", "836.12", "RabbitMQDurable")],
            Series = [new SeriesEntry("Tcp Client 2 (multi thread)", 355.43, "TcpClient2")],
            Failed = [new FailedEntry("NatsClient", 20_000, "IT4006", "No NATS broker.")],
        }, [new LabSection(new CountingSection(), new[] { 1.5, 2.5 })]);
    }

    [GeneratedRegex(@"</?[a-zA-Z][a-zA-Z0-9]*[\s>/]")]
    private static partial Regex HtmlTag();

    [GeneratedRegex(@"(^|\n)\s*(\||#{1,6} |- |\* )|\*\*|\|---")]
    private static partial Regex MarkdownSyntax();

    [TestMethod]
    public void The_report_model_holds_no_Markdown_or_HTML_only_data_the_exporters_render()
    {
        var model = Model();
        Assert.IsNotEmpty(model.BatchSweeps, "a batch sweep in the model");
        Assert.IsNotEmpty(model.LoadCurves, "a load curve in the model");
        Assert.IsNotEmpty(model.Faults, "a fault row in the model");
        var strings = new List<(string Path, string Text)>();
        var members = new List<string>();
        Walk(model, "model", strings, members, new HashSet<object>(ReferenceEqualityComparer.Instance));
        Assert.IsGreaterThan(20, strings.Count, "the walk reached the model's text");
        var marked = strings.Where(s => HtmlTag().IsMatch(s.Text) || MarkdownSyntax().IsMatch(s.Text)).Select(s => $"{s.Path}: {s.Text}").ToList();
        Assert.IsEmpty(marked, string.Join("\n", marked));
        // No member keeps rendered text by name either (a Markdown/Html pair, as the labs' sections and tables once were).
        Assert.IsEmpty(members.Where(m => m.EndsWith(".Markdown", StringComparison.Ordinal) || m.EndsWith(".Html", StringComparison.Ordinal)).ToList());
        // And the exporters still render every part of it.
        var markdown = new IntegrationTasks.Exporters.MarkdownExporter().Render(model);
        StringAssert.Contains(markdown, "| TcpClient2 (4 clients) |");
        StringAssert.Contains(markdown, "## Lab");
        var html = new IntegrationTasks.Exporters.HtmlExporter().Render(model);
        StringAssert.Contains(html, "<h2>Lab</h2>");
        StringAssert.Contains(html, "<svg id=\"lab\"");
    }

    [TestMethod]
    public void A_block_shown_in_one_format_is_left_out_of_the_other()
    {
        var document = new ReportDocument()
            .AddParagraph("both")
            .AddParagraph("markdown only", ReportFormats.Markdown)
            .AddChart(new ReportBarChart("chart", "t", [new ReportBar("a", 1)], "F0"));

        var (markdown, html) = (document.Markdown(), document.Html(charts: IntegrationTasks.Exporters.SvgCharts.Instance));

        Assert.AreEqual((true, true, false), (markdown.Contains("both"), markdown.Contains("markdown only"), markdown.Contains("svg")));
        Assert.AreEqual((true, false, true), (html.Contains("both"), html.Contains("markdown only"), html.Contains("<svg id=\"chart\"")));
        Assert.ThrowsExactly<InvalidOperationException>(() => document.Html());
    }

    /// <summary>Every string reachable from <paramref name="value"/> through fields, collections and dictionaries (delegates and types left out).</summary>
    private static void Walk(object? value, string path, List<(string, string)> strings, List<string> members, HashSet<object> seen)
    {
        switch (value)
        {
            case null or Delegate or Type or MemberInfo:
                return;
            case string text:
                strings.Add((path, text));
                return;
        }
        var type = value.GetType();
        if (type.IsPrimitive || type.IsEnum || value is decimal or DateTime or DateTimeOffset or TimeSpan || !seen.Add(value))
            return;
        if (value is IDictionary dictionary)
        {
            foreach (DictionaryEntry entry in dictionary)
            {
                Walk(entry.Key, $"{path}[key]", strings, members, seen);
                Walk(entry.Value, $"{path}[{entry.Key}]", strings, members, seen);
            }
            return;
        }
        if (value is IEnumerable items)
        {
            var i = 0;
            foreach (var item in items)
                Walk(item, $"{path}[{i++}]", strings, members, seen);
            return;
        }
        for (var t = type; t is not null && t != typeof(object); t = t.BaseType)
            foreach (var field in t.GetFields(BindingFlags.Instance | BindingFlags.Public | BindingFlags.NonPublic | BindingFlags.DeclaredOnly))
            {
                var name = field.Name.StartsWith('<') ? field.Name[1..field.Name.IndexOf('>', StringComparison.Ordinal)] : field.Name;
                if (field.FieldType == typeof(string))
                    members.Add($"{t.Name}.{name}");
                Walk(field.GetValue(value), $"{path}.{name}", strings, members, seen);
            }
    }
}
