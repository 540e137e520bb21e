namespace IntegrationTasks.Tests;

/// <summary>A directory of its own for one test, removed with everything in it when the test ends (`using var`).</summary>
internal sealed class TempDirectory(string prefix) : IDisposable
{
    public string Path { get; } = Directory.CreateTempSubdirectory(prefix).FullName;

    public static implicit operator string(TempDirectory directory) => directory.Path;

    public override string ToString() => Path;

    public void Dispose()
    {
        // A process that is ending (a server, the broker) may still write a last file: try again briefly.
        for (var attempt = 1; attempt <= 5 && Directory.Exists(Path); attempt++)
        {
            try
            {
                Directory.Delete(Path, recursive: true);
            }
            catch (Exception e) when (e is IOException or UnauthorizedAccessException && attempt < 5)
            {
                Thread.Sleep(200 * attempt);
            }
            catch (Exception e) when (e is IOException or UnauthorizedAccessException)
            {
                return; // the system's temporary-file cleanup takes the rest
            }
        }
    }
}
