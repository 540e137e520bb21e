using IntegrationTasks.Common;
using IntegrationTasks.Data;
using IntegrationTasks.Http;
using IntegrationTasks.Transfer;
using IntegrationTasks.Wire;

namespace IntegrationTasks.Host.Http;

/// <summary>
/// The series' GenericHandler.ashx on Kestrel: POST the request XML to /records, the records stream back.
/// Arguments: --provider, --connstring, --max-request-bytes.
/// </summary>
[HostModule("records")]
internal sealed class RecordsModule(HostArguments arguments) : IHostModule
{
    private RecordSource _source = null!;
    private long _maxRequestBytes;


    public string Describe() => $"{_source.Work}, {_source.Database.Describe()}";

    public async Task ConfigureAsync(WebApplicationBuilder builder, CancellationToken cancellationToken)
    {
        _maxRequestBytes = arguments.Number("--max-request-bytes", SettingDefaults.MaxRequestBytes);
        _source = await arguments.OpenRecordSourceAsync(cancellationToken);
        builder.WebHost.ConfigureKestrel(kestrel => kestrel.Limits.MaxRequestBodySize = _maxRequestBytes);
    }

    public void Map(WebApplication app)
    {
        var log = app.Logger;
        app.MapPost(HttpRecordsProtocol.Path, async Task<IResult> (HttpContext context) =>
        {
            var token = context.RequestAborted;
            List<int> ids;
            try
            {
                // The whole request is parsed before answering (its body bounded by MaxRequestBytes), so a bad one gets a
                // clean status; only its IDs are kept (4 bytes each), not the body.
                ids = await RecordXml.ReadRequestAsync(context.Request.Body, token);
            }
            catch (BadHttpRequestException e) when (e.StatusCode == StatusCodes.Status413PayloadTooLarge)
            {
                return Refuse(StatusCodes.Status413PayloadTooLarge, ErrorCodes.FrameTooLarge,
                    $"The request body is over the limit of {_maxRequestBytes:N0} bytes (MaxRequestBytes).");
            }
            catch (IntegrationException e)
            {
                return Refuse(StatusCodes.Status400BadRequest, e.Code, e.Message);
            }
            catch (Exception e) when (e is (IOException and not BadHttpRequestException) or OperationCanceledException)
            {
                // The connection went before the request was read whole (the peer left, or the stall guard cut it):
                // nobody is left to answer, and Kestrel must not see it as the application's failure.
                log.LogWarning("{Code}: the request from {Peer} ended before it was read whole: {Message}",
                    ErrorCodes.ConnectionLost, context.Connection.RemoteIpAddress, e.Message);
                context.Abort();
                return TypedResults.Empty;
            }

            var flushEachRecord = string.Equals(context.Request.Headers[HttpRecordsProtocol.FlushHeader], "true", StringComparison.OrdinalIgnoreCase);
            context.Response.ContentType = HttpRecordsProtocol.ContentType;
            try
            {
                await using var lookup = await _source.OpenLookupAsync(token);
                using var chunks = new ChunkedOutput(context.Response.Body);
                await RecordService.AnswerAsync(lookup, ids, chunks.Buffer, () => chunks.SendAsync(flushEachRecord, token), token);
                await chunks.SendAsync(force: true, token);
            }
            catch (Exception e) when (e is IntegrationException or IOException or OperationCanceledException)
            {
                // The response has started: the only honest signal left is to cut it, so the client sees it truncated.
                log.LogWarning("{Code}: answering {Peer} failed after the response started: {Message}",
                    e is IntegrationException ie ? ie.Code : ErrorCodes.ConnectionLost, context.Connection.RemoteIpAddress, e.Message);
                context.Abort();
            }
            return TypedResults.Empty;

            IResult Refuse(int status, string code, string message)
            {
                log.LogWarning("{Code}: refused a request from {Peer} with {Status}: {Message}", code, context.Connection.RemoteIpAddress, status, message);
                return TypedResults.Text(CodedError.Format(code, message), "text/plain", statusCode: status);
            }
        });
    }
}
