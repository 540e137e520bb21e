using IntegrationTasks.Common;
using IntegrationTasks.Data;
using IntegrationTasks.Http;
using IntegrationTasks.HttpHost;
using IntegrationTasks.Transfer;
using IntegrationTasks.Wire;



// The series' GenericHandler.ashx on Kestrel: POST the request XML to /records, the records stream back.
// Arguments: --url, --provider, --connstring, --max-request-bytes, --stop-on-stdin-close.
HostArguments options;
Database database;
try
{
    options = HostArgumentParser.Parse(args);
    database = Database.Create(options.Provider, options.ConnString);
    await database.EnsureSchemaAsync(CancellationToken.None);
}
catch (Exception e) when (e is IntegrationException or ArgumentException or FormatException)
{
    Console.Error.WriteLine(e is IntegrationException ie ? $"error {ie.Code}: {ie.Message}" : $"error {ErrorCodes.InvalidParameter}: {e.Message}");
    return 1;
}

var builder = WebApplication.CreateSlimBuilder();
builder.Logging.ClearProviders();
builder.Logging.AddSimpleConsole(o => o.SingleLine = true);
builder.Logging.SetMinimumLevel(LogLevel.Warning);
builder.WebHost.UseUrls(options.Url);
builder.WebHost.ConfigureKestrel(kestrel =>
{
    kestrel.AddServerHeader = false;
    kestrel.Limits.MaxRequestBodySize = options.MaxRequestBytes;
});
var app = builder.Build();
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
            $"The request body is over the limit of {options.MaxRequestBytes:N0} bytes (MaxRequestBytes).");
    }
    catch (IntegrationException e)
    {
        return Refuse(StatusCodes.Status400BadRequest, e.Code, e.Message);
    }

    var flushEachRecord = string.Equals(context.Request.Headers[HttpRecordsProtocol.FlushHeader], "true", StringComparison.OrdinalIgnoreCase);
    context.Response.ContentType = HttpRecordsProtocol.ContentType;
    try
    {
        await using var lookup = await RecordLookup.OpenAsync(database, token);
        using var chunks = new ChunkedOutput(context.Response.Body);
        await RecordService.AnswerAsync(lookup, ids, chunks.Buffer, () => chunks.SendAsync(flushEachRecord, token), token);
        await chunks.SendAsync(force: true, token);
    }
    catch (Exception e) when (e is IntegrationException or IOException or OperationCanceledException)
    {
        // The response has started: the only honest signal left is to cut it, so the client sees it truncated.
        log.LogWarning("{Code}: answering {Peer} failed after the response started: {Message}",
            e is IntegrationException ie ? ie.Code : ErrorCodes.TransferFailed, context.Connection.RemoteIpAddress, e.Message);
        context.Abort();
    }
    return Results.Empty;

    IResult Refuse(int status, string code, string message)
    {
        log.LogWarning("{Code}: refused a request from {Peer} with {Status}: {Message}", code, context.Connection.RemoteIpAddress, status, message);
        return Results.Text($"{code}: {message}", "text/plain", statusCode: status);
    }
});

if (options.StarvationConnString is { Length: > 0 } starvation)
    StarvationLab.Map(app, starvation, options.MinThreads);

try
{
    await app.StartAsync();
}
catch (IOException e) when (e.InnerException is System.Net.Sockets.SocketException { SocketErrorCode: System.Net.Sockets.SocketError.AddressAlreadyInUse } || e.Message.Contains("address already in use", StringComparison.OrdinalIgnoreCase))
{
    Console.Error.WriteLine($"error {ErrorCodes.PortInUse}: {options.Url} is already in use (a server left running?): {e.Message}");
    return 1;
}
Console.WriteLine($"{TransferServerTask.ReadyMarker} {options.Url} (HttpHost, {database.Describe()})");
if (options.StopOnStdinClose)
{
    _ = Task.Factory.StartNew(() =>
    {
        // Blocking read on its own thread: EOF means the parent closed our input or died.
        using var input = Console.OpenStandardInput();
        var buffer = new byte[256];
        while (input.Read(buffer, 0, buffer.Length) > 0)
        {
        }
        app.Lifetime.StopApplication();
    }, TaskCreationOptions.LongRunning);
}
await using (var stats = options.StatsFile is { Length: > 0 } ? new IntegrationTasks.Results.ServerStatsWriter(options.StatsFile) : null)
await using (var counters = options.CountersFile is { Length: > 0 } ? new IntegrationTasks.Labs.RuntimeCounters(options.CountersFile) : null)
    await app.WaitForShutdownAsync();
Console.WriteLine("HttpHost stopped.");
return 0;
