using System.Text;
using IntegrationTasks.Wcf;

namespace IntegrationTasks.Host.Wcf;

/// <summary>
/// SoapCore describes a data contract whose namespace is not an http URI (ours is <c>urn:integrationtasks:2014</c>) in a schema
/// of <c>http://schemas.datacontract.org/2004/07/</c> + that namespace, while its operations and the messages on the wire use the
/// namespace itself: the WSDL names a <c>Record</c> type it never defines, and a client generated from it (zeep, svcutil) fails.
/// The served WSDL is given the namespace the wire uses; the messages do not change.
/// </summary>
internal static class WsdlNamespaceFix
{
    private const string Misnamed = "http://schemas.datacontract.org/2004/07/" + ServiceNames.Namespace;

    /// <summary>What SoapCore answers with the WSDL: a GET to the service's own path (?wsdl, ?singleWsdl or none); its operations are POSTs.</summary>
    public static bool IsMetadataRequest(HttpContext context) =>
        HttpMethods.IsGet(context.Request.Method) && context.Request.Path.Equals(ServiceNames.SoapPath, StringComparison.OrdinalIgnoreCase);

    public static async Task InvokeAsync(HttpContext context, Func<Task> next)
    {
        var body = context.Response.Body;
        using var buffer = new MemoryStream();
        context.Response.Body = buffer;
        try
        {
            await next();
            // SoapCore writes through the body's pipe: what it holds reaches the buffer only when flushed.
            await context.Response.BodyWriter.FlushAsync(context.RequestAborted);
        }
        finally
        {
            context.Response.Body = body;
        }
        var wsdl = Encoding.UTF8.GetString(buffer.GetBuffer(), 0, (int)buffer.Length).Replace(Misnamed, ServiceNames.Namespace, StringComparison.Ordinal);
        var bytes = Encoding.UTF8.GetBytes(wsdl);
        context.Response.ContentLength = bytes.Length;
        await context.Response.Body.WriteAsync(bytes, context.RequestAborted);
    }
}
