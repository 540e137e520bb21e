using IntegrationTasks.Common;

namespace IntegrationTasks.Host;

/// <summary>
/// Kestrel drops connections on its own — a slowloris client at RequestHeadersTimeout (408), a client reading a response slower
/// than MinResponseDataRate, an HTTP/2 protocol error answered with GOAWAY — and logs each only at Debug or Information, which the
/// host does not show. This provider listens to those events alone and writes each as one coded warning line, as every other
/// refusal of the suite is written (and forwarded as a warning by the server task).
/// </summary>
internal sealed class KestrelEvents : ILoggerProvider
{
    public const string Category = "Microsoft.AspNetCore.Server.Kestrel";

    /// <summary>
    /// Kestrel's categories where a client's doing can be logged critical (an HTTP/2 flood filling a connection's output queue):
    /// the console leaves them to this provider, which codes the events it knows and writes any other warning or worse as the
    /// console would, so that Kestrel's own failures stay visible as such.
    /// </summary>
    public static readonly string[] ClientCategories = [$"{Category}.Http2", $"{Category}.Http3", $"{Category}.Connections", $"{Category}.BadRequests"];

    /// <summary>Kestrel's event names and the code each is told with.</summary>
    private static readonly Dictionary<string, string> Codes = new(StringComparer.Ordinal)
    {
        ["ConnectionBadRequest"] = ErrorCodes.MalformedXml, // a timeout among them is told apart below
        ["RequestBodyMinimumDataRateNotSatisfied"] = ErrorCodes.ConnectionStalled,
        ["ResponseMinimumDataRateNotSatisfied"] = ErrorCodes.ConnectionStalled,
        ["Http2ConnectionError"] = ErrorCodes.MalformedXml,
        ["Http2StreamError"] = ErrorCodes.MalformedXml,
        ["HPackDecodingError"] = ErrorCodes.MalformedXml,
        ["Http3ConnectionError"] = ErrorCodes.MalformedXml,
        ["Http2QueueOperationsExceeded"] = ErrorCodes.RequestRefused, // streams opened and reset faster than they are cleared
        ["AuthenticationFailed"] = ErrorCodes.TlsRefused, // a TLS handshake that failed: a plaintext client, no common version
        ["AuthenticationTimedOut"] = ErrorCodes.TlsRefused,
    };

    public ILogger CreateLogger(string categoryName) => categoryName.StartsWith(Category, StringComparison.Ordinal) ? new Logger(categoryName) : Microsoft.Extensions.Logging.Abstractions.NullLogger.Instance;

    public void Dispose()
    {
    }

    private sealed class Logger(string category) : ILogger
    {
        public IDisposable? BeginScope<TState>(TState state) where TState : notnull => null;

        public bool IsEnabled(LogLevel logLevel) => true;

        public void Log<TState>(LogLevel logLevel, EventId eventId, TState state, Exception? exception, Func<TState, Exception?, string> formatter)
        {
            var name = eventId.Name ?? "";
            var connectionId = state is IReadOnlyList<KeyValuePair<string, object?>> values
                ? values.FirstOrDefault(v => string.Equals(v.Key, "ConnectionId", StringComparison.OrdinalIgnoreCase)).Value as string : null;
            if (name == "HttpsConnectionEstablished" && connectionId is not null)
            {
                StallGuard.MarkTlsEstablished(connectionId);
                return;
            }
            if (!Codes.TryGetValue(name, out var code))
            {
                if (logLevel >= LogLevel.Warning && ClientCategories.Contains(category, StringComparer.Ordinal))
                    Console.WriteLine($"{Severity(logLevel)}: {category}[{eventId.Id}] {formatter(state, exception)}{(exception is null ? "" : $" {exception}")}");
                return;
            }
            var message = formatter(state, exception);
            if (exception?.Message is { Length: > 0 } reason && !message.Contains(reason, StringComparison.Ordinal))
                message += $" ({reason})";
            if (name == "ConnectionBadRequest" && message.Contains("timed out", StringComparison.OrdinalIgnoreCase))
                code = ErrorCodes.ConnectionStalled;
            var what = name.StartsWith("Http2", StringComparison.Ordinal) || name == "HPackDecodingError" || category.EndsWith(".Http2", StringComparison.Ordinal)
                ? "HTTP/2; a GOAWAY or RST_STREAM was sent" : "closed by Kestrel";
            Console.WriteLine($"warn: {category}[{eventId.Id}] {CodedError.Format(code, $"{message} ({what}).")}");
            // Told here: the stall guard does not tell the same connection again as one that ended before any request.
            if (connectionId is not null)
                StallGuard.ForgetTls(connectionId);
        }

        private static string Severity(LogLevel level) => level switch
        {
            LogLevel.Critical => "crit",
            LogLevel.Error => "fail",
            _ => "warn",
        };
    }
}
