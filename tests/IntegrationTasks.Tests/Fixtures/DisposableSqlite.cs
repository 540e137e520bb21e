namespace IntegrationTasks.Tests;

internal sealed class DisposableSqlite : IDisposable
{
    public TestDatabases Value { get; } = TestDatabases.Sqlite();
    public void Dispose() => Value.DisposeAsync().AsTask().GetAwaiter().GetResult();
}
