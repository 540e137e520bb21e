namespace IntegrationTasks.Hosting;

/// <summary>
/// How a server process and the suite talk without a protocol of their own: the server prints the
/// ready marker followed by its endpoint once it accepts work, and stops when its standard input
/// closes (the suite closes it to stop the server; it also closes when the suite dies).
/// </summary>
public static class ServerSignals
{
    /// <summary>The line the hosting layer waits for; followed by the endpoint.</summary>
    public const string ReadyMarker = "IT-SERVER-READY";

    /// <summary>The environment variable a server process started by the suite takes its database's connection string from.</summary>
    public const string ConnectionStringVariable = "INTEGRATIONTASKS_CONNECTION_STRING";

    public static string ReadyLine(string endpoint, string description) => $"{ReadyMarker} {endpoint} ({description})";

    /// <summary>Calls <paramref name="stop"/> once standard input reaches end of file.</summary>
    public static Task StopWhenInputClosesAsync(Action stop) =>
        Task.Factory.StartNew(() =>
        {
            // A blocking read on a thread of its own: console input cannot be cancelled, and the
            // process ends soon after the server stops anyway.
            using var input = Console.OpenStandardInput();
            var buffer = new byte[256];
            while (input.Read(buffer, 0, buffer.Length) > 0)
            {
            }
            stop();
        }, CancellationToken.None, TaskCreationOptions.LongRunning, TaskScheduler.Default);
}
