namespace IntegrationTasks.Tests;

/// <summary>curl (Debian's), a client no one here wrote: the status, the content type and the body of one request.</summary>
internal static class CurlRequest
{
    public static (string Status, string ContentType, string Body) Run(string url, params string[] options)
    {
        var (exitCode, stdout, stderr) = RepositoryPaths.Run("curl", ["-s", "--max-time", "30", "-w", "\n%{content_type}\n%{http_code}", .. options, url]);
        Assert.AreEqual(0, exitCode, stderr);
        var lines = stdout.Split('\n');
        return (lines[^1].Trim(), lines[^2].Trim(), string.Join('\n', lines[..^2]));
    }
}
