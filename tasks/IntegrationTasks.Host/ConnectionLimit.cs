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

    private static bool WantsProblem(HttpRequest request) =>
        request.Path.StartsWithSegments(IntegrationTasks.Rest.RestProtocol.Path) || request.Path.StartsWithSegments(IntegrationTasks.Rest.RestProtocol.OpenApiPath)
        || request.Headers.Accept.ToString().Contains("json", StringComparison.OrdinalIgnoreCase);

    /// <summary>The first middleware: a request on a refused connection is answered here and goes no further.</summary>
    public static async Task RefuseOverLimitAsync(HttpContext context, Func<Task> next)
    {
        if (context.Features.Get<IConnectionItemsFeature>()?.Items.TryGetValue(RefusalKey, out var reason) != true)
        {
            await next().ConfigureAwait(false);
            return;
        }
        var coded = CodedError.Format(ErrorCodes.ServerBusy, (string)reason!);
        var response = context.Response;
        if (context.Request.ContentType?.StartsWith("application/grpc", StringComparison.Ordinal) == true)
        {
            // Trailers-only: the status in the headers, no message.
            response.ContentType = "application/grpc";
            response.Headers["grpc-status"] = "8"; // RESOURCE_EXHAUSTED
            response.Headers["grpc-message"] = Uri.EscapeDataString(coded);
        }
        else if (context.Request.Headers.ContainsKey("SOAPAction"))
        {
            response.StatusCode = StatusCodes.Status500InternalServerError;
            response.ContentType = "text/xml; charset=utf-8";
            response.Headers.Connection = "close";
            await response.WriteAsync(Wcf.EnvelopeGuard.Soap11Fault("Server", coded), context.RequestAborted).ConfigureAwait(false);
        }
        else
        {
            response.StatusCode = StatusCodes.Status503ServiceUnavailable;
            if (!HttpProtocol.IsHttp2(context.Request.Protocol) && !HttpProtocol.IsHttp3(context.Request.Protocol))
                response.Headers.Connection = "close"; // HTTP/2 has no such header (Kestrel drops it with a warning): the GOAWAY below
            response.Headers.RetryAfter = "1";
            if (WantsProblem(context.Request))
            {
                // The REST endpoint answers every refusal as a problem with the coded detail (RFC 9457); this one too.
                response.ContentType = IntegrationTasks.Rest.RestProtocol.ProblemContentType;
                await System.Text.Json.JsonSerializer.SerializeAsync(response.Body, new IntegrationTasks.Rest.RestProblem("The server is busy.", response.StatusCode, coded),
                    IntegrationTasks.Rest.RestJsonContext.Default.RestProblem, context.RequestAborted).ConfigureAwait(false);
            }
            else
            {
                response.ContentType = "text/plain; charset=utf-8";
                await response.WriteAsync(coded, context.RequestAborted).ConfigureAwait(false);
            }
        }
        // HTTP/2 (gRPC): a GOAWAY after this stream, so the client opens a new connection when it tries again.
        context.Features.Get<IConnectionLifetimeNotificationFeature>()?.RequestClose();
    }
}
