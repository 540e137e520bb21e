namespace IntegrationTasks.Tests;

/// <summary>The TCP sockets listening on this machine (ss), to check what a server binds and that it let go.</summary>
internal static class Listeners
{
    public static List<(string Address, int Port)> Tcp()
    {
        var (_, stdout, _) = RepositoryPaths.Run("ss", ["-ltnH"]);
        var result = new List<(string, int)>();
        foreach (var line in stdout.Split('\n', StringSplitOptions.RemoveEmptyEntries))
        {
            var local = line.Split(' ', StringSplitOptions.RemoveEmptyEntries)[3];
            var colon = local.LastIndexOf(':');
            result.Add((local[..colon].Trim('[', ']'), int.Parse(local[(colon + 1)..])));
        }
        return result;
    }
}
