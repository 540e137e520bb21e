using IntegrationTasks.Hosting;

namespace IntegrationTasks.Transfer;

/// <summary>An HTTP client's handler that puts the service's bearer token on every request (the web services' TokenFile).</summary>
public sealed class BearerTokenHandler(ServiceToken token, HttpMessageHandler inner) : DelegatingHandler(inner)
{
    /// <summary><paramref name="inner"/> itself when there is no token; otherwise this around it (disposing this disposes it).</summary>
    public static HttpMessageHandler Around(HttpMessageHandler inner, ServiceToken? token) => token is null ? inner : new BearerTokenHandler(token, inner);

    protected override Task<HttpResponseMessage> SendAsync(HttpRequestMessage request, CancellationToken cancellationToken)
    {
        Authorize(request);
        return base.SendAsync(request, cancellationToken);
    }

    protected override HttpResponseMessage Send(HttpRequestMessage request, CancellationToken cancellationToken)
    {
        Authorize(request);
        return base.Send(request, cancellationToken);
    }

    private void Authorize(HttpRequestMessage request) => request.Headers.TryAddWithoutValidation("Authorization", token.AuthorizationHeader);
}
