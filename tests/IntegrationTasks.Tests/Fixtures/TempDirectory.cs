namespace IntegrationTasks.Tests;

/// <summary>A directory of its own for one test, removed with everything in it when the test ends (`using var`).</summary>
internal sealed class TempDirectory(string prefix) : IDisposable
{
    public string Path { get; } = Directory.CreateTempSubdirectory(prefix).FullName;

    public static implicit operator string(TempDirectory directory) => directory.Path;

    public override string ToString() => Path;

    public void Dispose()
    {
        Delete(Path);
        // Used as a TlsFolder, it has the authority's key kept beside it (TlsCertificates.AuthorityFolder).
        Delete(Path + ".authority");
    }

    private static void Delete(string path)
    {
        // A process that is ending (a server, the broker) may still write a last file: try again briefly.
        for (var attempt = 1; attempt <= 5 && Directory.Exists(path); attempt++)
        {
            try
            {
                Directory.Delete(path, recursive: true);
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
