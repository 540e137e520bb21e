using System.IO.Pipelines;
using System.Security;
using IntegrationTasks.Common;
using IntegrationTasks.Wire;

namespace IntegrationTasks.Host.Wcf;

/// <summary>
/// Looks at a SOAP request's prolog before SoapCore parses it: a DTD is refused unread (SoapCore's reader expanded internal
/// entities: `&amp;five;` came back as record 5, and a 946-byte "billion laughs" cost heavy CPU before its refusal), and a
/// SOAP 1.2 envelope gets a VersionMismatch fault saying that only SOAP 1.1 is served (it got "Parameter count mismatch").
/// Nothing is consumed: SoapCore reads the same body afterwards.
/// </summary>
internal static class EnvelopeGuard
{
    /// <summary>A prolog longer than this (comments, processing instructions) is refused rather than scanned on.</summary>
    private const int MaxPrologBytes = 64 * 1024;

    private const string Soap12Namespace = "http://www.w3.org/2003/05/soap-envelope";

    public static async Task InvokeAsync(HttpContext context, Func<Task> next, ILogger log)
    {
        if (!HttpMethods.IsPost(context.Request.Method))
        {
            await next();
            return;
        }
        if (context.Request.ContentType?.StartsWith("application/soap+xml", StringComparison.OrdinalIgnoreCase) == true)
        {
            await RefuseAsync(context, log, "VersionMismatch", ErrorCodes.MalformedXml,
                "This endpoint serves SOAP 1.1 only (text/xml, as BasicHttpBinding); the request is SOAP 1.2 (application/soap+xml).");
            return;
        }

        var body = context.Request.BodyReader;
        while (true)
        {
            ReadResult read;
            try
            {
                read = await body.ReadAsync(context.RequestAborted);
            }
            catch (BadHttpRequestException)
            {
                await next(); // over the size limit, or a broken body: SoapCore meets it again and answers with its coded fault
                return;
            }
            var verdict = XmlProlog.Inspect(read.Buffer, out var rootTag);
            var seen = read.Buffer.Length;
            body.AdvanceTo(read.Buffer.Start, verdict == PrologVerdict.NeedMore ? read.Buffer.End : read.Buffer.Start);
            switch (verdict)
            {
                case PrologVerdict.NeedMore when !read.IsCompleted && seen < MaxPrologBytes:
                    continue;
                case PrologVerdict.NeedMore when seen >= MaxPrologBytes:
                    await RefuseAsync(context, log, "Client", ErrorCodes.MalformedXml,
                        $"The request has no root element within its first {MaxPrologBytes:N0} bytes; refused unparsed.");
                    return;
                case PrologVerdict.Doctype:
                    await RefuseAsync(context, log, "Client", ErrorCodes.MalformedXml,
                        "The request carries a document type declaration (DTD); DTDs are refused, never processed.");
                    return;
                case PrologVerdict.Root when rootTag.Contains(Soap12Namespace, StringComparison.Ordinal):
                    await RefuseAsync(context, log, "VersionMismatch", ErrorCodes.MalformedXml,
                        "This endpoint serves SOAP 1.1 only (as BasicHttpBinding); the envelope is SOAP 1.2.");
                    return;
                default:
                    await next(); // a root without a DTD, or something SoapCore will refuse with its own coded fault
                    return;
            }
        }
    }

    /// <summary>A SOAP 1.1 fault with a coded reason, and the one coded line every refusal logs.</summary>
    private static async Task RefuseAsync(HttpContext context, ILogger log, string faultCode, string code, string message)
    {
        var reason = CodedError.Format(code, message);
        log.LogWarning("{Reason} Refused the request from {Peer} with a SOAP fault ({FaultCode}).", reason, context.Connection.RemoteIpAddress, faultCode);
        context.Response.StatusCode = StatusCodes.Status500InternalServerError;
        context.Response.ContentType = "text/xml; charset=utf-8";
        await context.Response.WriteAsync(Soap11Fault(faultCode, reason), context.RequestAborted);
    }

    /// <summary>A SOAP 1.1 fault envelope: its fault code (Client, Server, VersionMismatch) and its reason.</summary>
    public static string Soap11Fault(string faultCode, string reason) =>
        "<s:Envelope xmlns:s=\"http://schemas.xmlsoap.org/soap/envelope/\"><s:Body><s:Fault>" +
        $"<faultcode>s:{faultCode}</faultcode><faultstring xml:lang=\"en-US\">{SecurityElement.Escape(reason)}</faultstring>" +
        "</s:Fault></s:Body></s:Envelope>";
}
