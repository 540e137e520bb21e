namespace IntegrationTasks.Hosting;

/// <summary>
/// Makes SIGTERM fail this build as Ctrl+C does (<see cref="BuildTermination"/>), from the start of a target that will start servers,
/// before its first one (StartServer takes it over too).
/// </summary>
public sealed class WatchTermination : IntegrationTask
{
    protected override Task ExecuteAsync(CancellationToken cancellationToken)
    {
        BuildTermination.Watch();
        return Task.CompletedTask;
    }
}
