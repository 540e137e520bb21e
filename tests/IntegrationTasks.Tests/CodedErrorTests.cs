using IntegrationTasks.Common;
using IntegrationTasks.Hosting;
using Microsoft.Build.Utilities;

namespace IntegrationTasks.Tests;

[TestClass]
[TestCategory("Unit")]
public sealed class CodedErrorTests
{
    [TestMethod]
    public void The_text_form_round_trips_and_other_text_is_not_taken_for_a_code()
    {
        var text = CodedError.Format(ErrorCodes.FrameTooLarge, "The request body is over the limit: 1,000 bytes.");
        Assert.AreEqual("IT2101: The request body is over the limit: 1,000 bytes.", text);
        Assert.IsTrue(CodedError.TryParse(text + "\n", out var code, out var message));
        Assert.AreEqual(ErrorCodes.FrameTooLarge, code);
        Assert.AreEqual("The request body is over the limit: 1,000 bytes.", message);
        Assert.IsFalse(CodedError.TryParse("Bad Gateway", out code, out message));
        Assert.AreEqual("", code);
        Assert.AreEqual("Bad Gateway", message);
    }

    [TestMethod]
    public void A_server_process_error_is_forwarded_as_an_error_with_its_code_and_a_warning_as_a_warning()
    {
        var engine = new FakeBuildEngine();
        var forward = ServerLog.To(new TaskLoggingHelper(engine, "StartServer"), "TcpServer2");
        forward("/work/main/targets/Tcp/Tcp.targets(31,5): error IT4001: Port 8081 on 127.0.0.1 is already in use. [/work/main/build.proj]");
        forward("  warning IT2101: The frame declares 99,999,999 bytes, over the maximum.");
        forward("error IT1003: Cannot open the Sqlite database.");
        forward("TcpServer2: 20 requests answered.");
        forward("warn: IntegrationTasks.Host[0] IT2101: refused a request from 127.0.0.1 with 413: The request body is over the limit.");

        Assert.HasCount(2, engine.Errors);
        Assert.AreEqual(ErrorCodes.PortInUse, engine.Errors[0].Code);
        Assert.AreEqual("[TcpServer2] Port 8081 on 127.0.0.1 is already in use.", engine.Errors[0].Message);
        Assert.AreEqual(ErrorCodes.DatabaseFailure, engine.Errors[1].Code);
        Assert.HasCount(2, engine.Warnings);
        Assert.AreEqual(ErrorCodes.FrameTooLarge, engine.Warnings[0].Code);
        Assert.AreEqual("[TcpServer2] refused a request from 127.0.0.1 with 413: The request body is over the limit.", engine.Warnings[1].Message);
        Assert.IsTrue(engine.Messages.Any(m => m.Message == "[TcpServer2] TcpServer2: 20 requests answered."), engine.Log);
    }
}

[TestClass]
[TestCategory("Unit")]
public sealed class ErrorCodeTests
{
    private static readonly (string Name, string Code)[] Codes = typeof(ErrorCodes)
        .GetFields(System.Reflection.BindingFlags.Public | System.Reflection.BindingFlags.Static)
        .Where(f => f.IsLiteral).Select(f => (f.Name, (string)f.GetRawConstantValue()!)).ToArray();

    [TestMethod]
    public void Every_code_has_one_meaning()
    {
        Assert.IsGreaterThan(20, Codes.Length);
        var shared = Codes.GroupBy(c => c.Code).Where(g => g.Count() > 1).Select(g => $"{g.Key}: {string.Join(", ", g.Select(c => c.Name))}").ToList();
        Assert.IsEmpty(shared, string.Join("; ", shared));
        Assert.IsTrue(Codes.All(c => System.Text.RegularExpressions.Regex.IsMatch(c.Code, @"^IT\d{4}$")));
    }

    [TestMethod]
    public void Every_code_is_documented_in_docs_errors_md_with_its_name()
    {
        var rows = File.ReadAllLines(Path.Combine(RepositoryPaths.Root, "docs", "errors.md")).Where(l => l.StartsWith("| IT", StringComparison.Ordinal)).ToList();
        foreach (var (name, code) in Codes)
            Assert.IsTrue(rows.Any(r => r.StartsWith($"| {code} | {name} |", StringComparison.Ordinal)), $"{code} {name} is not in docs/errors.md");
        Assert.HasCount(Codes.Length, rows, "docs/errors.md lists a code that ErrorCodes does not have");
    }
}

[TestClass]
[TestCategory("Unit")]
public sealed class CapRecordCountsTests
{
    [TestMethod]
    public void A_capped_transport_runs_up_to_its_cap_and_the_rest_is_reported_as_not_run()
    {
        var capped = new Microsoft.Build.Utilities.TaskItem("SoapSmallRequests");
        capped.SetMetadata("MaxRecords", "50000");
        capped.SetMetadata("MaxRecordsProperty", "SmallRequestsMaxRecords");
        var task = new IntegrationTasks.Results.CapRecordCounts
        {
            BuildEngine = new FakeBuildEngine(), Transports = [capped, new Microsoft.Build.Utilities.TaskItem("TcpClient2")],
            RecordCounts = ["20000", "50000+1000000"],
        };
        Assert.IsTrue(task.Execute());
        Assert.AreEqual("20000+50000", task.Capped[0].GetMetadata("RecordCounts"));
        Assert.AreEqual("20000+50000+1000000", task.Capped[1].GetMetadata("RecordCounts"));
        Assert.HasCount(1, task.NotRun);
        Assert.AreEqual("SoapSmallRequests at 1,000,000 records", task.NotRun[0].ItemSpec);
        Assert.AreEqual("-p:SmallRequestsMaxRecords=1000000", task.NotRun[0].GetMetadata("Fix"));
        StringAssert.Contains(task.NotRun[0].GetMetadata("Reason"), "up to 50,000 records");
    }
}

[TestClass]
[TestCategory("Unit")]
public sealed class BarChartTests
{
    [TestMethod]
    public void The_longest_transport_name_fits_left_of_its_bar()
    {
        // Seen in a real report: "NetTcpSmallBatchesAsyncSyncServer" was cut to "pSmallBatchesAsyncSyncServer" by a fixed 200 px column.
        var svg = IntegrationTasks.Results.HtmlReport.BarChart("t", "title",
            [new("NetTcpSmallBatchesAsyncSyncServer", 1.0), new("DirectCopy", 2.0, Baseline: true)], "F3");
        var x = double.Parse(System.Text.RegularExpressions.Regex.Match(svg, "<rect [^>]*x=\"([0-9.]+)\"").Groups[1].Value,
            System.Globalization.CultureInfo.InvariantCulture);
        Assert.IsGreaterThanOrEqualTo(7.0 * "NetTcpSmallBatchesAsyncSyncServer".Length, x, svg);
    }
}
