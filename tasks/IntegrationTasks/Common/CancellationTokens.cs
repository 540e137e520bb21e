namespace IntegrationTasks.Common;

public static class CancellationTokens
{
    /// <summary>Completes, without throwing, once the token is cancelled: a server's "serve until stopped".</summary>
    public static async Task WhenCancelledAsync(this CancellationToken token)
    {
        try
        {
            await Task.Delay(Timeout.Infinite, token).ConfigureAwait(false);
        }
        catch (OperationCanceledException) when (token.IsCancellationRequested)
        {
        }
    }
}
