using System.Net;
using System.Text.RegularExpressions;
using IntegrationTasks.Common;
using IntegrationTasks.Data;
using IntegrationTasks.Hosting;
using IntegrationTasks.Transfer;
using IntegrationTasks.Wire;
using Microsoft.Build.Framework;

namespace IntegrationTasks.Http;

/// <summary>
/// The series' HTTP server (GenericHandler.ashx), on Kestrel. ASP.NET Core cannot load inside
/// MSBuild's process, so this task runs the host (IntegrationTasks.HttpHost.dll) as a process of
/// its own and stays its entry point: it waits until the host is ready, forwards its log, and
/// stops it when the task is cancelled or stopped by the suite.
/// </summary>
public sealed class HttpServer : TransferServerTask
{
    [Required] public string HostAssembly { get; set; } = "";

    /// <summary>The URL Kestrel listens on; loopback by default.</summary>
    public string Url { get; set; } = "http://127.0.0.1:8082";

    /// <summary>Request bodies over this are refused with 413.</summary>
    public long MaxRequestBytes { get; set; } = HttpRecordsProtocol.DefaultMaxRequestBytes;

    public int ReadyTimeoutSeconds { get; set; } = 60;

    protected override bool ReportsOwnStats => false;

    protected override async Task<(string Endpoint, Func<CancellationToken, Task> Serve)> StartAsync(Database database, CancellationToken cancellationToken)
    {
        if (!File.Exists(HostAssembly))
            throw new IntegrationException(ErrorCodes.InvalidParameter, $"The HTTP host {HostAssembly} does not exist; build it with -t:BuildTasks.");
        var launch = new ServerLaunch(ServerLaunch.DotnetHost,
            [HostAssembly, "--url", Url, "--provider", ServerProvider, "--connstring", ServerConnString,
             "--max-request-bytes", MaxRequestBytes.ToString(System.Globalization.CultureInfo.InvariantCulture), "--stop-on-stdin-close",
             .. (string.IsNullOrEmpty(StatsFile) ? Array.Empty<string>() : ["--stats-file", StatsFile])],
            Path.GetDirectoryName(HostAssembly)!);
        var host = ServerProcess.Start("HttpHost", launch, logFile: null, ServerLog.To(Log, "HttpHost"));
        string endpoint;
        try
        {
            endpoint = await host.WaitReadyAsync(TimeSpan.FromSeconds(ReadyTimeoutSeconds), cancellationToken).ConfigureAwait(false);
        }
        catch
        {
            host.Dispose();
            throw;
        }
        Func<CancellationToken, Task> serve = async token =>
        {
            using (host)
            {
                var exited = await host.WaitForExitOrCancellationAsync(token).ConfigureAwait(false);
                if (exited)
                    throw new IntegrationException(ErrorCodes.ServerExited,
                        $"The HTTP host exited on its own. Its last output:{Environment.NewLine}{host.RecentOutput()}");
                if (await host.StopAsync(TimeSpan.FromSeconds(20), CancellationToken.None).ConfigureAwait(false) is null)
                    throw new IntegrationException(ErrorCodes.ServerStopTimeout, "The HTTP host did not stop within 20 s and was killed.");
            }
        };
        return (endpoint, serve);
    }
}

/// <summary>
/// The series' HTTPRequestTest: one POST carries the IDs (streamed, not buffered), and the records
/// are imported while the response is still arriving, one transaction per batch.
/// </summary>
public sealed partial class HttpRequest : TransferClientTask
{
    private static readonly HttpClient Client = new(new SocketsHttpHandler { AutomaticDecompression = DecompressionMethods.None })
    {
        Timeout = Timeout.InfiniteTimeSpan, // the task's own TimeoutSeconds bounds the transfer
    };

    [Required] public string Uri { get; set; } = "http://127.0.0.1:8082" + HttpRecordsProtocol.Path;

    /// <summary>Ask the server to flush after every record (the series' default), or to send 64 KB chunks.</summary>
    public bool Flush { get; set; } = true;

    protected override string TransportName => "HttpRequest";

    [GeneratedRegex(@"^(?<code>IT\d{4}): (?<message>.*)$", RegexOptions.Singleline)]
    private static partial Regex CodedError();

    protected override async Task<TransferResult> TransferAsync(BatchPlan plan, BatchImporter importer, CancellationToken cancellationToken)
    {
        if (!System.Uri.TryCreate(Uri, UriKind.Absolute, out var uri))
            throw new IntegrationException(ErrorCodes.InvalidParameter, $"Uri '{Uri}' is not an absolute URL.");
        importer.MarkSetupDone(); // HttpClient connects inside SendAsync: setup here is the request's preparation only
        var content = new RequestContent(plan);
        using var request = new HttpRequestMessage(HttpMethod.Post, uri) { Content = content };
        request.Headers.Add(HttpRecordsProtocol.FlushHeader, Flush ? "true" : "false");
        HttpResponseMessage response;
        try
        {
            response = await Client.SendAsync(request, HttpCompletionOption.ResponseHeadersRead, cancellationToken).ConfigureAwait(false);
        }
        catch (HttpRequestException e)
        {
            throw new IntegrationException(ErrorCodes.ConnectionFailed,
                $"POST {uri} failed: {e.Message}. Is the server running? Start it with: dotnet msbuild build.proj -t:HttpServer", e);
        }
        using (response)
        {
            if (!response.IsSuccessStatusCode)
            {
                var text = await response.Content.ReadAsStringAsync(cancellationToken).ConfigureAwait(false);
                var match = CodedError().Match(text);
                throw new IntegrationException(match.Success ? match.Groups["code"].Value : ErrorCodes.TransferFailed,
                    $"The HTTP server answered {(int)response.StatusCode} {response.ReasonPhrase}: {(match.Success ? match.Groups["message"].Value : text)}");
            }
            await using var body = new CountingStream(await response.Content.ReadAsStreamAsync(cancellationToken).ConfigureAwait(false));
            try
            {
                await importer.ImportStreamAsync(body, plan.BatchSize, cancellationToken).ConfigureAwait(false);
            }
            catch (Exception e) when (e is HttpIOException or IOException)
            {
                throw new IntegrationException(ErrorCodes.TransferFailed, $"The response broke off after {body.BytesRead:N0} bytes: {e.Message}", e);
            }
            return new TransferResult(content.BytesWritten, body.BytesRead);
        }
    }

    /// <summary>The request XML, written straight into the request body in bounded memory.</summary>
    private sealed class RequestContent : HttpContent
    {
        private readonly BatchPlan _plan;

        public RequestContent(BatchPlan plan)
        {
            _plan = plan;
            Headers.ContentType = new System.Net.Http.Headers.MediaTypeHeaderValue("text/xml") { CharSet = "utf-8" };
        }

        public long BytesWritten { get; private set; }

        protected override Task SerializeToStreamAsync(Stream stream, TransportContext? context) =>
            SerializeToStreamAsync(stream, context, CancellationToken.None);

        protected override async Task SerializeToStreamAsync(Stream stream, TransportContext? context, CancellationToken cancellationToken)
        {
            var counting = new CountingStream(stream);
            await RecordXml.WriteRequestAsync(counting, Enumerable.Range(1, _plan.Records), cancellationToken).ConfigureAwait(false);
            BytesWritten = counting.BytesWritten;
        }

        protected override bool TryComputeLength(out long length)
        {
            length = 0;
            return false;
        }
    }
}
