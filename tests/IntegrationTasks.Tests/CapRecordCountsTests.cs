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
        var task = new IntegrationTasks.Planning.CapRecordCounts
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

    [TestMethod]
    public void A_cap_below_every_count_runs_the_transport_at_its_cap_with_the_references_there_too()
    {
        var capped = new Microsoft.Build.Utilities.TaskItem("SoapSmallRequests");
        capped.SetMetadata("MaxRecords", "5000");
        capped.SetMetadata("MaxRecordsProperty", "SmallRequestsMaxRecords");
        var reference = new Microsoft.Build.Utilities.TaskItem("PipelinedCopy");
        reference.SetMetadata("Reference", "true");
        var odd = new Microsoft.Build.Utilities.TaskItem("NetTcpSmallRequests");
        odd.SetMetadata("MaxRecords", "4500"); // not a whole number of batches: not run at all, as before
        var task = new IntegrationTasks.Planning.CapRecordCounts
        {
            BuildEngine = new FakeBuildEngine(), Transports = [capped, reference, odd, new Microsoft.Build.Utilities.TaskItem("TcpClient2")],
            RecordCounts = ["20000+50000"], BatchSize = 1000,
        };
        Assert.IsTrue(task.Execute());
        CollectionAssert.AreEqual(new[] { "5000", "5000+20000+50000", "", "20000+50000" }, task.Capped.Select(t => t.GetMetadata("RecordCounts")).ToArray());
        CollectionAssert.AreEqual(new[] { "SoapSmallRequests at 20,000 records", "SoapSmallRequests at 50,000 records", "NetTcpSmallRequests at 20,000 records", "NetTcpSmallRequests at 50,000 records" },
            task.NotRun.Select(n => n.ItemSpec).ToArray());

        // Five batches at the cap, but every run asks for at least eight clients, each needing a batch: not run at the cap either.
        task = new IntegrationTasks.Planning.CapRecordCounts
        {
            BuildEngine = new FakeBuildEngine(), Transports = [capped, reference], RecordCounts = ["20000+50000"], BatchSize = 1000, ClientCounts = ["8+16"],
        };
        Assert.IsTrue(task.Execute());
        CollectionAssert.AreEqual(new[] { "", "20000+50000" }, task.Capped.Select(t => t.GetMetadata("RecordCounts")).ToArray());
    }
}
