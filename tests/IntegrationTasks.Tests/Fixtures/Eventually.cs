namespace IntegrationTasks.Tests;

/// <summary>
/// Waiting for something a test cannot be told about directly (a line in a server's log, a file, a count): checked every 20 ms,
/// within a timeout, and a timeout fails the test naming what it waited for and what it saw — never a bare TaskCanceledException.
/// </summary>
internal static class Eventually
{
    public static readonly TimeSpan DefaultTimeout = TimeSpan.FromSeconds(30);

    public static Task WaitUntilAsync(Func<bool> condition, string what, TimeSpan? timeout = null, Func<string>? seen = null) =>
        WaitUntilAsync(() => Task.FromResult(condition()), what, timeout, seen);

    public static async Task WaitUntilAsync(Func<Task<bool>> condition, string what, TimeSpan? timeout = null, Func<string>? seen = null)
    {
        var limit = timeout ?? DefaultTimeout;
        var clock = System.Diagnostics.Stopwatch.StartNew();
        while (!await condition())
        {
            if (clock.Elapsed > limit)
                Assert.Fail($"Waited {limit.TotalSeconds:0.#} s for {what}; it did not happen.{(seen is null ? "" : $" Seen:\n{seen()}")}");
            await Task.Delay(20, CancellationToken.None);
        }
    }
}
