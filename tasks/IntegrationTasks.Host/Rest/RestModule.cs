using System.Text.Json;
using IntegrationTasks.Common;
using IntegrationTasks.Data;
using IntegrationTasks.Rest;
using Microsoft.AspNetCore.Server.Kestrel.Core;

namespace IntegrationTasks.Host.Rest;

/// <summary>
/// The REST/JSON server: a minimal API, <c>GET /api/records?firstId=&amp;count=</c>, each response a JSON array written as the
/// records are read (System.Text.Json's source-generated serializers into the response's pipe, flushed every 16 KB), and its
/// OpenAPI document at /openapi/v1.json for any client generator. A request it cannot take is a 400 problem+json with the coded
/// error as its detail. Arguments: --provider, --connstring, --server-work, --max-batch-records, --http-version (Http1, Http2).
/// </summary>
[HostModule("rest")]
internal sealed class RestModule(HostArguments arguments) : IHostModule
{
    private const int FlushBytes = 16 * 1024;

    /// <summary>
    /// Batches read from the database at once; the others wait their turn (oldest first), holding only their request. What the host
    /// holds then depends on this, not on how many requests come: each read holds a database connection (and, with SQLite, a thread)
    /// and its response's buffers. More reads at once than a machine's few cores serve no faster.
    /// </summary>
    private const int ReadsAtOnce = 16;

    /// <summary>Requests that may wait for a read; one more is refused at once (503, IT3008) rather than held.</summary>
    private const int WaitingRequests = 10_000;

    private readonly Turns _reads = new(ReadsAtOnce, WaitingRequests);

    private TimeSpan _waitLimit;
    private RecordSource _source = null!;
    private int _maxBatchRecords;
    private RestHttpVersion _version;

    public string Describe() => $"{RestProtocol.Path} ({_version}), {_source.Work}, {_source.Database.Describe()}";

    public async Task ConfigureAsync(WebApplicationBuilder builder, CancellationToken cancellationToken)
    {
        _maxBatchRecords = (int)arguments.Number("--max-batch-records", SettingDefaults.MaxBatchRecords);
        _version = RestHttpVersions.Parse(arguments.Value("--http-version") ?? nameof(RestHttpVersion.Http1));
        // Half the connection timeout: the host's stall guard counts that timeout from the request's last byte, and a request the
        // server keeps waiting must get its 503 before the guard drops the connection as the client's fault.
        _waitLimit = TimeSpan.FromSeconds(arguments.Number("--connection-timeout-seconds", SettingDefaults.ConnectionTimeoutSeconds) / 2.0);
        if (_maxBatchRecords < 1)
            throw new IntegrationException(ErrorCodes.InvalidParameter, $"MaxBatchRecords must be at least 1 (was {_maxBatchRecords}).");
        _source = await arguments.OpenRecordSourceAsync(cancellationToken);
        builder.Services.ConfigureHttpJsonOptions(options =>
        {
            options.SerializerOptions.TypeInfoResolverChain.Insert(0, RestJsonContext.Default);
            // The web defaults read numbers from strings too, and the OpenAPI document then types every number "number or string";
            // the service writes numbers only, and the contract says so.
            options.SerializerOptions.NumberHandling = System.Text.Json.Serialization.JsonNumberHandling.Strict;
        });
        builder.Services.AddOpenApi(options => options.AddOperationTransformer((operation, _, _) =>
        {
            // The query is read as text (so that a bad number gets the coded problem), which the generator would type as strings:
            // the document says what the endpoint takes, required whole numbers within their limits.
            foreach (var parameter in (operation.Parameters ?? []).OfType<Microsoft.OpenApi.OpenApiParameter>())
            {
                var maximum = parameter.Name == "count" ? _maxBatchRecords : int.MaxValue;
                parameter.Required = true;
                parameter.Schema = new Microsoft.OpenApi.OpenApiSchema
                {
                    Type = Microsoft.OpenApi.JsonSchemaType.Integer, Format = "int32", Minimum = "1",
                    Maximum = maximum.ToString(System.Globalization.CultureInfo.InvariantCulture),
                };
            }
            return Task.CompletedTask;
        }));
    }

    /// <summary>HTTP/2 without TLS has no negotiation: the endpoint speaks the one version the transport was started with.</summary>
    public void ConfigureEndpoint(ListenOptions endpoint) =>
        endpoint.Protocols = _version == RestHttpVersion.Http2 ? HttpProtocols.Http2 : HttpProtocols.Http1;

    public void Map(WebApplication app)
    {
        var log = app.Logger;
        // What the framework answers with an empty body — 405 for another method, 404 for another path — is a problem with the coded
        // detail as well, as every other refusal here, and one coded line in the log.
        app.UseStatusCodePages(async status =>
        {
            var context = status.HttpContext;
            var request = context.Request;
            var message = context.Response.StatusCode switch
            {
                StatusCodes.Status405MethodNotAllowed => $"{request.Method} {request.Path} is not served: the one operation is GET {RestProtocol.Path}?firstId=1&count=1000.",
                StatusCodes.Status404NotFound => $"{request.Path} is not served: the one resource is {RestProtocol.Path}, described at {RestProtocol.OpenApiPath}.",
                var other => $"{request.Method} {request.Path} was refused with {other}.",
            };
            await Refuse(context, ErrorCodes.RequestRefused, message, context.Response.StatusCode).ExecuteAsync(context);
        });
        app.MapOpenApi(RestProtocol.OpenApiPath);
        // The query read as text and parsed here, so a bad number gets the coded problem rather than the framework's bare 400.
        app.MapGet(RestProtocol.Path, async Task<IResult> (string? firstId, string? count, HttpContext context) =>
        {
            if (!RestProtocol.TryParseWholeNumber(firstId, out var first) || !RestProtocol.TryParseWholeNumber(count, out var n))
                return Refuse(context, ErrorCodes.InvalidParameter,
                    $"firstId and count must be whole numbers (GET {RestProtocol.Path}?firstId=1&count=1000); were '{Shown(firstId)}', '{Shown(count)}'.");
            if (n < 1 || n > _maxBatchRecords)
                return Refuse(context, ErrorCodes.BatchTooLarge, $"count must be between 1 and {_maxBatchRecords:N0} (MaxBatchRecords); was {n:N0}.");
            if (!RestProtocol.IsIdRange(first, n))
                return Refuse(context, ErrorCodes.InvalidParameter, $"firstId must be at least 1, and firstId + count within an ID's range (was {first:N0}, {n:N0}).");
            var token = context.RequestAborted;
            using var read = await _reads.TakeAsync(_waitLimit, token);
            switch (read.Outcome)
            {
                case TurnOutcome.TimedOut:
                    return Refuse(context, ErrorCodes.ServerBusy, $"no database read was free within {_waitLimit.TotalSeconds:0.#} s (half of ConnectionTimeoutSeconds); try again later.",
                        StatusCodes.Status503ServiceUnavailable);
                case TurnOutcome.TooManyWaiting:
                    return Refuse(context, ErrorCodes.ServerBusy, $"{WaitingRequests:N0} requests are waiting for a database read already; try again later.",
                        StatusCodes.Status503ServiceUnavailable);
            }
            context.Response.ContentType = "application/json; charset=utf-8";
            try
            {
                await using var lookup = await _source.OpenLookupAsync(token);
                var body = context.Response.BodyWriter;
                await using var writer = new Utf8JsonWriter(body, RestProtocol.WriterOptions);
                writer.WriteStartArray();
                await foreach (var record in lookup.ReadAsync(first, n, token))
                {
                    JsonSerializer.Serialize(writer, record, RestJsonContext.Default.ServiceRecord);
                    if (writer.BytesPending >= FlushBytes)
                    {
                        writer.Flush();
                        await body.FlushAsync(token);
                    }
                }
                writer.WriteEndArray();
                writer.Flush();
                await body.FlushAsync(token);
            }
            catch (Exception e) when (e is IntegrationException or IOException or OperationCanceledException)
            {
                // The response has started: the only honest signal left is to cut it, so the client sees it truncated.
                log.LogWarning("{Code}: answering {Peer} failed after the response started: {Message}",
                    e is IntegrationException ie ? ie.Code : ErrorCodes.ConnectionLost, context.Connection.RemoteIpAddress, e.Message);
                context.Abort();
            }
            return TypedResults.Empty;
        })
        .WithName("GetRecords")
        .WithSummary("The records of IDs firstId .. firstId + count - 1, as a JSON array streamed as they are read.")
        .Produces<ServiceRecord[]>(StatusCodes.Status200OK, "application/json")
        .ProducesProblem(StatusCodes.Status400BadRequest);

        // What the client sent, as JSON escapes it: a control character (a NUL, a line break) never reaches the log as itself.
        static string Shown(string? value) => value is null ? "" : JsonEncodedText.Encode(value).ToString();

        IResult Refuse(HttpContext context, string code, string message, int status = StatusCodes.Status400BadRequest)
        {
            log.LogWarning("{Code}: refused a request from {Peer} with {Status}: {Message}", code, context.Connection.RemoteIpAddress, status, message);
            return TypedResults.Problem(CodedError.Format(code, message), statusCode: status, title: "The request was refused.");
        }
    }
}
