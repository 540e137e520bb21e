using IntegrationTasks.Common;
using Microsoft.AspNetCore.Connections.Features;
using Microsoft.AspNetCore.Server.Kestrel.Core;

namespace IntegrationTasks.Host;

/// <summary>
/// The host's most connections at once (--max-connections). One more is not dropped unanswered, as Kestrel's own
/// MaxConcurrentConnections would: it is marked, and each of its requests is refused in the caller's protocol with IT3008 — a gRPC
/// status (RESOURCE_EXHAUSTED), a SOAP fault, or 503 with the coded line — then the connection is asked to close. The connections
/// being served go on.
/// </summary>
internal sealed class ConnectionLimit(int max, ILogger log)
{
    private const string RefusalKey = "IntegrationTasks.Refusal";
    private int _open;

    public int Max => max;

    public void Use(ListenOptions listen) =>
        listen.Use(next => async connection =>
        {
            if (Interlocked.Increment(ref _open) > max)
            {
                var reason = $"{max} connections are being served, the most this server takes at once (KestrelMaxConnections); try again later.";
                connection.Items[RefusalKey] = reason;
                log.LogWarning("{Code}: refused the connection from {Peer}: {Reason}", ErrorCodes.ServerBusy, connection.RemoteEndPoint, reason);
            }
            try
            {
                await next(connection).ConfigureAwait(false);
            }
            finally
            {
                Interlocked.Decrement(ref _open);
            }
        });

    /// <summary>The first middleware: a request on a refused connection is answered here and goes no further.</summary>
    public static async Task RefuseOverLimitAsync(HttpContext context, Func<Task> next)
    {
        if (context.Features.Get<IConnectionItemsFeature>()?.Items.TryGetValue(RefusalKey, out var reason) != true)
        {
            await next().ConfigureAwait(false);
            return;
        }
        await Refusal.ServerBusy.AnswerAsync(context, CodedError.Format(ErrorCodes.ServerBusy, (string)reason!)).ConfigureAwait(false);
        // HTTP/2 (gRPC): a GOAWAY after this stream, so the client opens a new connection when it tries again.
        context.Features.Get<IConnectionLifetimeNotificationFeature>()?.RequestClose();
    }
}
