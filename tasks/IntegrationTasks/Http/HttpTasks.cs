using System.Net;
using IntegrationTasks.Transfer;
using IntegrationTasks.Wire;

namespace IntegrationTasks.Http;

/// <summary>
/// The series' HTTP server (GenericHandler.ashx), on Kestrel: the host process's "records" module
/// (tasks/IntegrationTasks.Host/Http), started, watched and stopped by this task.
/// </summary>
public sealed class HttpServer : HostModuleServerTask
{
    /// <summary>Request bodies over this are refused with 413.</summary>
    public long MaxRequestBytes { get; set; } = SettingDefaults.MaxRequestBytes;

    protected override string Module => "records";

    protected override IEnumerable<string> ModuleArguments() =>
        ["--max-request-bytes", MaxRequestBytes.ToString(System.Globalization.CultureInfo.InvariantCulture)];
}

/// <summary>
/// The series' HTTPRequestTest: one POST carries the IDs (streamed, not buffered), and the records
/// are imported while the response is still arriving, one transaction per batch.
/// </summary>
public sealed class HttpRequest : TransferClientTask
{
    private static readonly HttpClient Client = new(new SocketsHttpHandler { AutomaticDecompression = DecompressionMethods.None })
    {
        Timeout = Timeout.InfiniteTimeSpan, // the task's own TimeoutSeconds bounds the transfer
    };

    [Required] public string Uri { get; set; } = "http://127.0.0.1:8082" + HttpRecordsProtocol.Path;

    /// <summary>HTTPS: the server's certificate must come from the authority in TlsFolder and name the Uri's host; Uri is then https://.</summary>
    public bool Tls { get; set; }

    /// <summary>Where the authority's certificate is (the server's TlsFolder).</summary>
    public string TlsFolder { get; set; } = "";

    /// <summary>Mutual TLS: present the client certificate in TlsFolder (the server then takes only clients of its authority).</summary>
    public bool ClientCertificates { get; set; }

    /// <summary>The file holding the web service's bearer token (the server's TokenFile); empty: send none.</summary>
    public string TokenFile { get; set; } = "";

    private HttpClient? _ownClient;

    /// <summary>
    /// The shared client, or with Tls or a token this task's own: its handler trusts the authority in TlsFolder alone, and puts the
    /// token on every request.
    /// </summary>
    private HttpClient Http => !Tls && TokenFile.Length == 0 ? Client : LazyInitializer.EnsureInitialized(ref _ownClient, () =>
    {
        var handler = new SocketsHttpHandler { AutomaticDecompression = DecompressionMethods.None };
        if (Tls)
            Streams.TlsConnector.Secure(handler, TlsFolder, new System.Uri(Uri).Host, TimeoutSeconds, ClientCertificates);
        return new HttpClient(BearerTokenHandler.Around(handler, Hosting.ServiceToken.Load(TokenFile))) { Timeout = Timeout.InfiniteTimeSpan };
    });

    /// <summary>Ask the server to flush after every record (the series' default), or to send 64 KB chunks.</summary>
    public bool Flush { get; set; } = true;

    protected override string TransportName => "HttpRequest";

    /// <summary>Each client its own POST (HTTP/1.1: a connection of the shared pool to itself while it streams) and resume loop.</summary>
    protected override bool ServesManyClients => true;

    /// <summary>With -p:Rate, one POST per batch, each sent on the client's schedule (up to MaxInFlight at once; closed loop is one POST for all).</summary>
    protected override bool SendsOnSchedule => true;

    protected override async Task<TransferResult> TransferAsync(BatchPlan plan, BatchImporter importer, CancellationToken cancellationToken)
    {
        if (!System.Uri.TryCreate(Uri, UriKind.Absolute, out var uri) || (Tls && uri.Scheme != System.Uri.UriSchemeHttps))
            throw new IntegrationException(ErrorCodes.InvalidParameter, $"Uri '{Uri}' is not an absolute {(Tls ? "https://" : "")}URL{(Tls ? " (Tls=true)" : "")}.");
        importer.MarkSetupDone(); // HttpClient connects inside SendAsync: setup here is the request's preparation only
        var resumption = Resumption(plan, resumes: true);
        if (Rate > 0)
            return await PostEachBatchOnScheduleAsync(uri, plan, resumption, importer, cancellationToken).ConfigureAwait(false);
        long written = 0, read = 0;
        // A broken response is resumed with a new POST carrying only the IDs of the batches not committed.
        await resumption.RunAsync(async (missing, token) =>
        {
            var content = new RequestContent(plan, missing);
            // One POST asks for every batch at once: each batch's wait runs from it to that batch's commit.
            foreach (var batch in missing)
                resumption.Committed.Latency.Sent(batch);
            try
            {
                read += await RequestAsync(uri, content, plan, resumption, importer, token).ConfigureAwait(false);
            }
            // A server killed mid-request can surface as the socket's own error from wherever the handler was (ENOTCONN, seen here).
            catch (System.Net.Sockets.SocketException e)
            {
                throw new IntegrationException(ErrorCodes.ConnectionLost, $"The connection to {uri} broke: {e.Message}", e);
            }
            finally
            {
                written += content.BytesWritten;
            }
        }, cancellationToken).ConfigureAwait(false);
        return new TransferResult(written, read);
    }

    /// <summary>
    /// Open loop: a POST per batch, each sent at its slot of the client's schedule, so a slow server cannot slow the requests down
    /// (one POST for all would be a single request whatever the rate). Each reply is read whole (one batch) and imported in turn.
    /// </summary>
    private async Task<TransferResult> PostEachBatchOnScheduleAsync(System.Uri uri, BatchPlan plan, ResumingTransfer resumption, BatchImporter importer,
        CancellationToken cancellationToken)
    {
        var imports = new SerialImporter(importer);
        long written = 0, read = 0;
        await resumption.RunAsync((missing, token) => BoundedBatches.RunAsync(missing.Count, MaxInFlight, async (index, batchToken) =>
        {
            var batch = missing[index];
            await resumption.Committed.Latency.SendTurnAsync(batch, batchToken).ConfigureAwait(false);
            var content = new RequestContent(plan, [batch]);
            try
            {
                var records = new List<ServiceRecord>(plan.BatchSize);
                Interlocked.Add(ref read, await RequestAsync(uri, content, resumption, async body =>
                {
                    using var reader = new RecordXml.ResponseReader(body);
                    while (await reader.ReadAsync(batchToken).ConfigureAwait(false) is { } record)
                        records.Add(record);
                }, batchToken).ConfigureAwait(false));
                resumption.Committed.Latency.Received(batch);
                await imports.ImportAsync(records, batchToken).ConfigureAwait(false);
                resumption.Committed.Add(batch);
            }
            catch (System.Net.Sockets.SocketException e)
            {
                throw new IntegrationException(ErrorCodes.ConnectionLost, $"The connection to {uri} broke: {e.Message}", e);
            }
            finally
            {
                Interlocked.Add(ref written, content.BytesWritten);
            }
        }, token), cancellationToken).ConfigureAwait(false);
        return new TransferResult(written, read);
    }

    /// <summary>One POST for the given batches, its response imported while it arrives; returns the response bytes read.</summary>
    private Task<long> RequestAsync(System.Uri uri, RequestContent content, BatchPlan plan, ResumingTransfer resumption, BatchImporter importer,
        CancellationToken cancellationToken) =>
        RequestAsync(uri, content, resumption, body =>
            // One transaction per batch of the plan, each marked committed by the batch its records belong to.
            importer.ImportStreamAsync(body, plan.BatchSize, cancellationToken,
                batchOf: record => plan.BatchOf(record.Id), committed: resumption.Committed.Add, received: resumption.Committed.Latency.Received),
            cancellationToken);

    /// <summary>One POST, its successful response's body handed to <paramref name="readBody"/>; returns the response bytes read.</summary>
    private async Task<long> RequestAsync(System.Uri uri, RequestContent content, ResumingTransfer resumption, Func<Stream, Task> readBody,
        CancellationToken cancellationToken)
    {
        using var request = new HttpRequestMessage(HttpMethod.Post, uri) { Content = content };
        request.Headers.Add(HttpRecordsProtocol.FlushHeader, Flush ? "true" : "false");
        HttpResponseMessage response;
        try
        {
            response = await Http.SendAsync(request, HttpCompletionOption.ResponseHeadersRead, cancellationToken).ConfigureAwait(false);
        }
        catch (HttpRequestException e) when (e.InnerException is System.Security.Authentication.AuthenticationException)
        {
            throw new IntegrationException(ErrorCodes.TlsRefused, $"TLS with {uri.Authority} failed: {e.Message} ({e.InnerException.Message})", e);
        }
        catch (HttpRequestException e)
        {
            throw new IntegrationException(ErrorCodes.ConnectionFailed,
                $"POST {uri} failed: {e.Message}. Is the server running? Start it with: dotnet msbuild build.proj -t:HttpServer", e);
        }
        using (response)
        {
            resumption.MarkConnected();
            if (!response.IsSuccessStatusCode)
            {
                var text = await response.Content.ReadAsStringAsync(cancellationToken).ConfigureAwait(false);
                var coded = CodedError.TryParse(text, out var code, out var message);
                throw new IntegrationException(coded ? code : ErrorCodes.RequestRefused,
                    $"The HTTP server answered {(int)response.StatusCode} {response.ReasonPhrase}: {message}");
            }
            await using var body = new CountingStream(await response.Content.ReadAsStreamAsync(cancellationToken).ConfigureAwait(false));
            try
            {
                await readBody(body).ConfigureAwait(false);
            }
            catch (Exception e) when (e is HttpIOException or IOException)
            {
                throw new IntegrationException(ErrorCodes.ConnectionLost, $"The response broke off after {body.BytesRead:N0} bytes: {e.Message}", e);
            }
            return body.BytesRead;
        }
    }

    /// <summary>The request XML, written straight into the request body in bounded memory.</summary>
    private sealed class RequestContent : HttpContent
    {
        private readonly BatchPlan _plan;
        private readonly IReadOnlyList<int> _batches;

        public RequestContent(BatchPlan plan, IReadOnlyList<int> batches)
        {
            _plan = plan;
            _batches = batches;
            Headers.ContentType = new System.Net.Http.Headers.MediaTypeHeaderValue("text/xml") { CharSet = "utf-8" };
        }

        public long BytesWritten { get; private set; }

        protected override Task SerializeToStreamAsync(Stream stream, TransportContext? context) =>
            SerializeToStreamAsync(stream, context, CancellationToken.None);

        protected override async Task SerializeToStreamAsync(Stream stream, TransportContext? context, CancellationToken cancellationToken)
        {
            var counting = new CountingStream(stream);
            await RecordXml.WriteRequestAsync(counting, _batches.SelectMany(_plan.Ids), cancellationToken).ConfigureAwait(false);
            BytesWritten = counting.BytesWritten;
        }

        protected override bool TryComputeLength(out long length)
        {
            length = 0;
            return false;
        }
    }
}
