using IntegrationTasks.Common;
using IntegrationTasks.Hosting;

namespace IntegrationTasks.Host;

/// <summary>
/// --token-file: every request must carry the service's bearer token (<c>Authorization: Bearer …</c>, on a WebSocket its upgrade
/// request). One without it is refused in its protocol with IT3010 and one coded line in the host's log, and goes no further.
/// </summary>
internal sealed class ServiceTokenGuard(ServiceToken token, ILogger log)
{
    public async Task RequireTokenAsync(HttpContext context, Func<Task> next)
    {
        if (token.Admits(context.Request.Headers.Authorization.ToString() is { Length: > 0 } header ? header : null))
        {
            await next().ConfigureAwait(false);
            return;
        }
        var reason = context.Request.Headers.Authorization.Count == 0
            ? "the request carries no bearer token; this server takes only requests with its token (TokenFile)."
            : "the request's bearer token is not this server's (TokenFile).";
        log.LogWarning("{Code}: refused {Method} {Path} from {Peer}: {Reason}", ErrorCodes.CredentialsRefused, context.Request.Method, context.Request.Path,
            context.Connection.RemoteIpAddress, reason);
        await Refusal.Unauthenticated.AnswerAsync(context, CodedError.Format(ErrorCodes.CredentialsRefused, reason)).ConfigureAwait(false);
    }
}
