
namespace IntegrationTasks.Tests;

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
