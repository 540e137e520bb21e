namespace IntegrationTasks.Http;

/// <summary>The HTTP transport's contract, shared by the host process and the client task.</summary>
public static class HttpRecordsProtocol
{
    public const string Path = "/records";

    /// <summary>The series' option: "true" flushes after every record (a chunk each), otherwise 64 KB chunks.</summary>
    public const string FlushHeader = "Flush";

    public const string ContentType = "text/xml; charset=utf-8";
}
