namespace IntegrationTasks.Host;

/// <summary>
/// A request the host refuses before any module sees it, answered in the caller's protocol with its coded line: a gRPC status
/// (trailers-only), a SOAP fault, or an HTTP status with the line as text — or, for the REST endpoint and JSON callers, as an RFC 9457
/// problem's detail.
/// </summary>
internal sealed record Refusal(int HttpStatus, string Title, int GrpcStatus)
{
    /// <summary>Over the connection limit: 503, RESOURCE_EXHAUSTED; the connection is asked to close.</summary>
    public static Refusal ServerBusy { get; } = new(StatusCodes.Status503ServiceUnavailable, "The server is busy.", 8);

    /// <summary>Without the service's bearer token: 401, UNAUTHENTICATED.</summary>
    public static Refusal Unauthenticated { get; } = new(StatusCodes.Status401Unauthorized, "The request carries no valid credentials.", 16);

    private static bool WantsProblem(HttpRequest request) =>
        request.Path.StartsWithSegments(IntegrationTasks.Rest.RestProtocol.Path) || request.Path.StartsWithSegments(IntegrationTasks.Rest.RestProtocol.OpenApiPath)
        || request.Headers.Accept.ToString().Contains("json", StringComparison.OrdinalIgnoreCase);

    public async Task AnswerAsync(HttpContext context, string codedLine)
    {
        var response = context.Response;
        if (context.Request.ContentType?.StartsWith("application/grpc", StringComparison.Ordinal) == true)
        {
            // Trailers-only: the status in the headers, no message.
            response.ContentType = "application/grpc";
            response.Headers["grpc-status"] = GrpcStatus.ToString(System.Globalization.CultureInfo.InvariantCulture);
            response.Headers["grpc-message"] = Uri.EscapeDataString(codedLine);
            return;
        }
        if (context.Request.Headers.ContainsKey("SOAPAction"))
        {
            response.StatusCode = StatusCodes.Status500InternalServerError;
            response.ContentType = "text/xml; charset=utf-8";
            response.Headers.Connection = "close";
            await response.WriteAsync(Wcf.EnvelopeGuard.Soap11Fault("Server", codedLine), context.RequestAborted).ConfigureAwait(false);
            return;
        }
        response.StatusCode = HttpStatus;
        if (!HttpProtocol.IsHttp2(context.Request.Protocol) && !HttpProtocol.IsHttp3(context.Request.Protocol))
            response.Headers.Connection = "close"; // HTTP/2 has no such header (Kestrel drops it with a warning)
        if (HttpStatus == StatusCodes.Status503ServiceUnavailable)
            response.Headers.RetryAfter = "1";
        if (HttpStatus == StatusCodes.Status401Unauthorized)
            response.Headers.WWWAuthenticate = "Bearer";
        if (WantsProblem(context.Request))
        {
            // The REST endpoint answers every refusal as a problem with the coded detail (RFC 9457); these too.
            response.ContentType = IntegrationTasks.Rest.RestProtocol.ProblemContentType;
            await System.Text.Json.JsonSerializer.SerializeAsync(response.Body, new IntegrationTasks.Rest.RestProblem(Title, response.StatusCode, codedLine),
                IntegrationTasks.Rest.RestJsonContext.Default.RestProblem, context.RequestAborted).ConfigureAwait(false);
        }
        else
        {
            response.ContentType = "text/plain; charset=utf-8";
            await response.WriteAsync(codedLine, context.RequestAborted).ConfigureAwait(false);
        }
    }
}
