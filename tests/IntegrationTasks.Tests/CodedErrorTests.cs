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
        forward("/src/it/targets/Tcp/Tcp.targets(31,5): error IT4001: Port 8081 on 127.0.0.1 is already in use. [/src/it/build.proj]");
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
        StringAssert.StartsWith(engine.Warnings[1].Message, "[TcpServer2] refused a request from 127.0.0.1 with 413:");
        Assert.IsTrue(engine.Messages.Any(m => m.Message == "[TcpServer2] TcpServer2: 20 requests answered."), engine.Log);
    }
}
