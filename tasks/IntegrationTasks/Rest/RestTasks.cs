using System.Globalization;
using System.Net;
using System.Text.Json;
using IntegrationTasks.Transfer;

namespace IntegrationTasks.Rest;

/// <summary>
/// The REST/JSON server: the host process's "rest" module (tasks/IntegrationTasks.Host/Rest), an ASP.NET Core minimal API on
/// Kestrel with its OpenAPI document. Not in the 2014 series: what most teams build between two systems today.
/// </summary>
public sealed class RestServer : HostModuleServerTask
{
    /// <summary>The most records one GET may ask for (count); more is answered 400 with IT2005.</summary>
    public int MaxBatchRecords { get; set; } = SettingDefaults.MaxBatchRecords;

    /// <summary>Http1 (HTTP/1.1 keep-alive, the default) or Http2 (HTTP/2 without TLS, as the gRPC endpoint speaks it).</summary>
    public string HttpVersion { get; set; } = nameof(RestHttpVersion.Http1);

    protected override string Module => "rest";

    protected override IEnumerable<string> ModuleArguments() =>
        ["--max-batch-records", MaxBatchRecords.ToString(CultureInfo.InvariantCulture), "--http-version", RestHttpVersions.Parse(HttpVersion).ToString()];
}

/// <summary>The HTTP versions the REST transport speaks: both sides are set alike (HTTP/2 without TLS has no negotiation).</summary>
public enum RestHttpVersion
{
    Http1,
    Http2,
}

public static class RestHttpVersions
{
    public static RestHttpVersion Parse(string name) =>
        Enum.TryParse<RestHttpVersion>(name, ignoreCase: true, out var version) && Enum.IsDefined(version)
            ? version
            : throw new IntegrationException(ErrorCodes.InvalidParameter, $"HttpVersion must be Http1 or Http2 (was '{name}').");
}

/// <summary>
/// The REST/JSON client: a GET per batch, at most MaxInFlight at once over HttpClient's pooled keep-alive connections (or
/// HTTP/2 streams), each response read with ResponseHeadersRead and deserialized as an async stream of records (never buffered
/// whole), imported one transaction per batch. A broken response is resumed: only the batches not committed are asked again.
/// </summary>
public sealed class RestJson : TransferClientTask
{
    [Required] public string Uri { get; set; } = "http://127.0.0.1:8087" + RestProtocol.Path;

    /// <summary>Http1 or Http2, as the server was started with.</summary>
    public string HttpVersion { get; set; } = nameof(RestHttpVersion.Http1);

    /// <summary>HTTPS: the server's certificate must come from the authority in TlsFolder and name the Uri's host; Uri is then https://.</summary>
    public bool Tls { get; set; }

    /// <summary>Where the authority's certificate is (the server's TlsFolder).</summary>
    public string TlsFolder { get; set; } = "";

    /// <summary>Mutual TLS: present the client certificate in TlsFolder (the server then takes only clients of its authority).</summary>
    public bool ClientCertificates { get; set; }

    /// <summary>The file holding the web service's bearer token (the server's TokenFile); empty: send none.</summary>
    public string TokenFile { get; set; } = "";

    protected override string TransportName => "RestJson";

    /// <summary>Each client its own HttpClient, connections and resume loop.</summary>
    protected override bool ServesManyClients => true;

    /// <summary>Every GET waits for its turn (open loop with -p:Rate).</summary>
    protected override bool SendsOnSchedule => true;

    protected override async Task<TransferResult> TransferAsync(BatchPlan plan, BatchImporter importer, CancellationToken cancellationToken)
    {
        var scheme = Tls ? System.Uri.UriSchemeHttps : System.Uri.UriSchemeHttp;
        if (!System.Uri.TryCreate(Uri, UriKind.Absolute, out var uri) || uri.Scheme != scheme)
            throw new IntegrationException(ErrorCodes.InvalidParameter, $"Uri '{Uri}' is not an absolute {scheme}:// URL{(Tls ? " (Tls=true)" : "")}.");
        var version = RestHttpVersions.Parse(HttpVersion);
        var resumption = Resumption(plan, resumes: true);
        var wire = new CountedHttpConnections(resumption);
        var handler = wire.CreateHandler(); // the HttpClient disposes it
        if (Tls)
            Streams.TlsConnector.Secure(handler, TlsFolder, uri.Host, TimeoutSeconds, ClientCertificates);
        using var http = new HttpClient(BearerTokenHandler.Around(handler, Hosting.ServiceToken.Load(TokenFile)), disposeHandler: true)
        {
            Timeout = Timeout.InfiniteTimeSpan, // the task's own TimeoutSeconds bounds the transfer
            DefaultRequestVersion = version == RestHttpVersion.Http2 ? System.Net.HttpVersion.Version20 : System.Net.HttpVersion.Version11,
            DefaultVersionPolicy = HttpVersionPolicy.RequestVersionExact,
        };
        var imports = new SerialImporter(importer);
        importer.MarkSetupDone(); // HttpClient connects inside the first GET
        await resumption.RunAsync((missing, token) => BoundedBatches.RunAsync(missing.Count, MaxInFlight, async (index, batchToken) =>
        {
            var batch = missing[index];
            await resumption.Committed.Latency.SendTurnAsync(batch, batchToken).ConfigureAwait(false);
            var ids = plan.Ids(batch);
            var records = await GetAsync(http, uri, ids[0], ids.Count, batchToken).ConfigureAwait(false);
            resumption.Committed.Latency.Received(batch);
            await imports.ImportAsync(records, batchToken).ConfigureAwait(false);
            resumption.Committed.Add(batch);
        }, token), cancellationToken).ConfigureAwait(false);
        return new TransferResult(wire.BytesWritten, wire.BytesRead);
    }

    /// <summary>One GET; its records as they stream in. A coded problem is that error; a response cut short is IT3006 (a break).</summary>
    private static async Task<List<ServiceRecord>> GetAsync(HttpClient http, System.Uri uri, int firstId, int count, CancellationToken cancellationToken)
    {
        var address = new System.Uri(uri, string.Create(CultureInfo.InvariantCulture, $"{uri.AbsolutePath}?firstId={firstId}&count={count}"));
        HttpResponseMessage response;
        try
        {
            response = await http.GetAsync(address, HttpCompletionOption.ResponseHeadersRead, cancellationToken).ConfigureAwait(false);
        }
        catch (HttpRequestException e) when (e.HttpRequestError is HttpRequestError.SecureConnectionError && e.InnerException is System.Security.Authentication.AuthenticationException)
        {
            throw new IntegrationException(ErrorCodes.TlsRefused, $"TLS with {uri.Authority} failed: {e.Message}{(e.InnerException is { } inner ? $" ({inner.Message})" : "")}", e);
        }
        catch (HttpRequestException e) when (e.HttpRequestError is HttpRequestError.ConnectionError or HttpRequestError.NameResolutionError)
        {
            throw new IntegrationException(ErrorCodes.ConnectionFailed,
                $"GET {uri} failed: {e.Message}. Is the server running? Start it with: dotnet msbuild build.proj -t:RestServer", e);
        }
        catch (HttpRequestException e)
        {
            throw new IntegrationException(ErrorCodes.ConnectionLost, $"GET {address} broke: {e.Message}", e);
        }
        using (response)
        {
            if (!response.IsSuccessStatusCode)
                throw await RefusalAsync(response, cancellationToken).ConfigureAwait(false);
            var records = new List<ServiceRecord>(count);
            try
            {
                await using var body = await response.Content.ReadAsStreamAsync(cancellationToken).ConfigureAwait(false);
                await foreach (var record in RestProtocol.ReadRecordsAsync(body, cancellationToken).ConfigureAwait(false))
                    records.Add(record);
            }
            catch (JsonException e)
            {
                // A body cut short reads as JSON that ends early: a break, resumed; anything else is malformed.
                throw e.Message.Contains("end of data", StringComparison.OrdinalIgnoreCase) || e.InnerException is IOException
                    ? new IntegrationException(ErrorCodes.ConnectionLost, $"The response to GET {address} broke off after {records.Count} records: {e.Message}", e)
                    : new IntegrationException(ErrorCodes.MalformedMessage, $"The response to GET {address} is not the records' JSON: {e.Message}", e);
            }
            catch (Exception e) when (e is HttpIOException or IOException)
            {
                throw new IntegrationException(ErrorCodes.ConnectionLost, $"The response to GET {address} broke off after {records.Count} records: {e.Message}", e);
            }
            return records;
        }
    }

    /// <summary>A 4xx or 5xx: its problem's coded detail as that error, else the status.</summary>
    private static async Task<IntegrationException> RefusalAsync(HttpResponseMessage response, CancellationToken cancellationToken)
    {
        var text = await response.Content.ReadAsStringAsync(cancellationToken).ConfigureAwait(false);
        string? detail = null;
        if (response.Content.Headers.ContentType?.MediaType == RestProtocol.ProblemContentType)
        {
            try
            {
                detail = JsonSerializer.Deserialize(text, RestJsonContext.Default.RestProblem)?.Detail;
            }
            catch (JsonException)
            {
            }
        }
        detail ??= text;
        return CodedError.TryParse(detail, out var code, out var message)
            ? new IntegrationException(code, $"The REST server answered {(int)response.StatusCode} {response.ReasonPhrase}: {message}")
            : new IntegrationException(response.StatusCode == HttpStatusCode.ServiceUnavailable ? ErrorCodes.ServerBusy : ErrorCodes.RequestRefused,
                $"The REST server answered {(int)response.StatusCode} {response.ReasonPhrase}: {detail}");
    }
}
