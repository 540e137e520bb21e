namespace IntegrationTasks.Tests;

[TestClass]
[TestCategory("Unit")]
public sealed class IntegrationTaskTests
{
    /// <summary>Records the scheduler its code runs under, before and after yielding.</summary>
    private sealed class SchedulerProbe : IntegrationTask
    {
        public TaskScheduler? AtStart { get; private set; }
        public TaskScheduler? AfterYield { get; private set; }

        protected override async Task ExecuteAsync(CancellationToken cancellationToken)
        {
            AtStart = TaskScheduler.Current;
            await Task.Yield();
            AfterYield = TaskScheduler.Current;
        }
    }

    [TestMethod]
    public async Task A_task_run_inside_another_scheduler_runs_its_code_on_the_thread_pool()
    {
        // As MSBuild runs a task: inside a Task of a scheduler of its own (MSBuild's gives each queued continuation a thread it keeps).
        var probe = new SchedulerProbe { BuildEngine = new FakeBuildEngine() };
        var other = new ConcurrentExclusiveSchedulerPair().ConcurrentScheduler;
        var succeeded = await Task.Factory.StartNew(probe.Execute, CancellationToken.None, TaskCreationOptions.None, other).WaitAsync(TimeSpan.FromSeconds(30));
        Assert.IsTrue(succeeded);
        Assert.AreSame(TaskScheduler.Default, probe.AtStart);
        Assert.AreSame(TaskScheduler.Default, probe.AfterYield);
    }
}
