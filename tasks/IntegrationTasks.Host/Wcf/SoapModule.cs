using System.ServiceModel.Channels;
using System.Xml;
using IntegrationTasks.Common;
using IntegrationTasks.Data;
using IntegrationTasks.Wcf;
using SoapCore;

namespace IntegrationTasks.Host.Wcf;

/// <summary>
/// The series' IntegrationTestsService over SOAP 1.1 (what BasicHttpBinding speaks) with SoapCore, WSDL at ?wsdl.
/// Arguments: --provider, --connstring, --connections, --answerers, --max-message-bytes, --max-batch-records.
/// A request body over --max-message-bytes is refused before it is read; one the service cannot take is a fault
/// with a coded reason; either way the service goes on serving.
/// </summary>
[HostModule("soap")]
internal sealed class SoapModule(HostArguments arguments) : IHostModule
{
    private RecordSource _source = null!;
    private IntegrationTestsService _service = null!;
    private long _maxMessageBytes;
    private ILogger? _log;
    private IHttpContextAccessor? _requests;


    public string Describe() => $"{ServiceNames.SoapPath}, {_source.Work}, {_source.Database.Describe()}";

    public async Task ConfigureAsync(WebApplicationBuilder builder, CancellationToken cancellationToken)
    {
        _maxMessageBytes = arguments.Number("--max-message-bytes", 64L * 1024 * 1024);
        _source = await arguments.OpenRecordSourceAsync(cancellationToken);
        _service = await IntegrationTestsService.OpenAsync(_source, (int)arguments.Number("--connections", 8), (int)arguments.Number("--answerers", SettingDefaults.Answerers),
            (int)arguments.Number("--max-batch-records", SettingDefaults.MaxBatchRecords), cancellationToken);
        builder.Services.AddSoapCore();
        builder.Services.AddHttpContextAccessor();
        builder.Services.AddSingleton<SoapCore.Extensibility.ISoapMessageProcessor, CarriageReturnPreservingProcessor>();
        builder.Services.AddSingleton(new SoapCore.Extensibility.ExceptionTransformer(CodedFaultReason));
        builder.Services.AddSingleton<IIntegrationTestsService>(_service);
        builder.WebHost.ConfigureKestrel(kestrel => kestrel.Limits.MaxRequestBodySize = _maxMessageBytes);
    }

    /// <summary>
    /// SoapCore logs each exception it turns into a fault as an error with its stack; the fault's reason goes through
    /// <see cref="CodedFaultReason"/>, which writes the one coded line, so SoapCore's own line is left out (a critical one still shows).
    /// </summary>
    public void ConfigureLogging(ILoggingBuilder logging) =>
        logging.AddFilter<Microsoft.Extensions.Logging.Console.ConsoleLoggerProvider>("SoapCore.SoapEndpointMiddleware", LogLevel.Critical);

    /// <summary>Every fault's reason is a coded message: the service's own (already coded), or what SoapCore met reading the request.</summary>
    private string CodedFaultReason(Exception exception)
    {
        var reason = CodedReason(exception);
        // A body that stalled until the connection was dropped gets no answer at all: saying it was answered would be untrue.
        if (_requests?.HttpContext?.RequestAborted.IsCancellationRequested == true || ReadCancelled(exception))
            _log?.LogWarning("{Reason} (the connection was dropped before an answer; nothing was sent)", reason);
        else
            _log?.LogWarning("{Reason} (answered with a SOAP fault)", reason);
        return reason;
    }

    /// <summary>
    /// The body's read was cancelled: the connection was dropped (ASP.NET Core throws "The request was aborted", a cancellation),
    /// which can reach here a moment before the request's own RequestAborted says so.
    /// </summary>
    private static bool ReadCancelled(Exception exception)
    {
        for (var e = exception; e is not null; e = e.InnerException)
            if (e is OperationCanceledException)
                return true;
        return false;
    }

    private string CodedReason(Exception exception)
    {
        for (var e = exception; e is not null; e = e.InnerException)
        {
            switch (e)
            {
                case System.ServiceModel.FaultException fault when CodedError.TryParse(fault.Message, out _, out _):
                    return fault.Message;
                case BadHttpRequestException { StatusCode: StatusCodes.Status413PayloadTooLarge }:
                    return CodedError.Format(ErrorCodes.FrameTooLarge, $"The request is over the limit of {_maxMessageBytes:N0} bytes (WcfMaxMessageBytes).");
                case XmlException xml:
                    return CodedError.Format(ErrorCodes.MalformedXml, $"The request is not a well-formed SOAP envelope: {xml.Message}");
            }
        }
        return CodedError.Format(ErrorCodes.RequestRefused, $"The request could not be served: {exception.Message}");
    }

    public void Map(WebApplication app)
    {
        _log = app.Logger;
        _requests = app.Services.GetRequiredService<IHttpContextAccessor>();
        app.Lifetime.ApplicationStopped.Register(() => _service.DisposeAsync().AsTask().GetAwaiter().GetResult());
        var size = (int)Math.Min(_maxMessageBytes, int.MaxValue);
        var guardLog = _log;
        app.UseWhen(context => context.Request.Path.StartsWithSegments(ServiceNames.SoapPath),
            branch => branch.Use((context, next) => EnvelopeGuard.InvokeAsync(context, next, guardLog)));
        app.UseWhen(WsdlNamespaceFix.IsMetadataRequest,
            branch => branch.Use((context, next) => WsdlNamespaceFix.InvokeAsync(context, next)));
        // Called on IApplicationBuilder: on WebApplication the overloads are ambiguous.
        ((IApplicationBuilder)app).UseSoapEndpoint<IIntegrationTestsService>(options =>
        {
            options.Path = ServiceNames.SoapPath;
            options.SoapSerializer = SoapSerializer.DataContractSerializer;
            options.NormalizeNewLines = false; // a CR LF inside a value is data, never rewritten (and see CarriageReturnPreservingProcessor)
            options.EncoderOptions =
            [
                new SoapEncoderOptions
                {
                    MessageVersion = MessageVersion.Soap11,
                    ReaderQuotas = new XmlDictionaryReaderQuotas { MaxArrayLength = size, MaxStringContentLength = size, MaxDepth = 32, MaxBytesPerRead = 64 * 1024, MaxNameTableCharCount = 16 * 1024 },
                },
            ];
        });
    }
}
