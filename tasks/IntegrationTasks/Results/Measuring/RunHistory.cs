using IntegrationTasks.Transfer;

namespace IntegrationTasks.Results;

/// <summary>What the build's tasks do with the results database: a run appended as it is recorded, the RunAll finished with its report.</summary>
public static class RunHistory
{
    /// <summary>Settings whose values may hold secrets (a connection string's password, a token, a key): kept as "(set)".</summary>
    private static bool Secret(string name) =>
        name.EndsWith("ConnString", StringComparison.OrdinalIgnoreCase)
        || new[] { "Password", "Secret", "Token", "Key", "Credential" }.Any(part => name.Contains(part, StringComparison.OrdinalIgnoreCase));

    /// <summary>The build's settings as the database keeps them: its global properties, secrets' values left out.</summary>
    public static Dictionary<string, string> Settings(IReadOnlyDictionary<string, string> globalProperties) =>
        globalProperties.ToDictionary(p => p.Key, p => Secret(p.Key) && p.Value.Length > 0 ? "(set)" : p.Value, StringComparer.Ordinal);

    /// <summary>Appends <paramref name="run"/> to this build's RunAll in the database (begun by its first run); nothing without a connection string.</summary>
    public static async Task AppendAsync(RunState state, string provider, string connectionString, Func<(string Commit, string ResultsDirectory, IReadOnlyDictionary<string, string> Settings)> describe,
        Measurement run, CancellationToken cancellationToken)
    {
        if (connectionString.Length == 0)
            return;
        var history = ResultsHistory.Open(provider, connectionString);
        var id = await state.HistoryIdAsync(() =>
        {
            var (commit, resultsDirectory, settings) = describe();
            return history.BeginAsync(DateTimeOffset.UtcNow, commit, Environment.MachineName, resultsDirectory, settings, CancellationToken.None);
        }).ConfigureAwait(false);
        await history.AppendAsync(id, run, cancellationToken).ConfigureAwait(false);
    }
}
