using System.Text.Encodings.Web;
using System.Text.Json;
using System.Text.Json.Serialization;

namespace IntegrationTasks.Rest;

/// <summary>
/// The REST/JSON transport's resource: <c>GET /api/records?firstId=1&amp;count=1000</c> answers the records of IDs
/// firstId..firstId+count-1 as a JSON array, streamed as they are read; a request the server cannot take is a 4xx
/// problem+json whose <c>detail</c> is the coded error ("IT2005: …"). The OpenAPI document is at <see cref="OpenApiPath"/>.
/// </summary>
public static class RestProtocol
{
    public const string Path = "/api/records";

    public const string OpenApiPath = "/openapi/v1.json";

    public const string ProblemContentType = "application/problem+json";

    /// <summary>
    /// How the records are written: non-ASCII text as UTF-8 rather than \uXXXX escapes (the body is JSON for a program, never put
    /// into HTML, which is what the default escaping guards; quotes, backslashes and control characters are still escaped), and
    /// no structural checks, since the serializer writes well-formed JSON. Shorter, and cheaper to write and to read.
    /// </summary>
    public static readonly JsonWriterOptions WriterOptions = new() { Encoder = JavaScriptEncoder.UnsafeRelaxedJsonEscaping, SkipValidation = true };

    /// <summary>
    /// A query's whole number as the OpenAPI document types it (int32, no sign): ASCII digits only, nothing before or after them
    /// (.NET's own parsing lets trailing NULs through: "5%00" read as 5), within int32.
    /// </summary>
    public static bool TryParseWholeNumber(string? text, out int value)
    {
        value = 0;
        if (string.IsNullOrEmpty(text) || text.Length > 10 || !text.All(char.IsAsciiDigit))
            return false;
        var number = long.Parse(text, System.Globalization.CultureInfo.InvariantCulture);
        if (number > int.MaxValue)
            return false;
        value = (int)number;
        return true;
    }

    /// <summary>Whether IDs firstId .. firstId + count − 1 are all IDs (1 to int.MaxValue), for a count of at least 1.</summary>
    public static bool IsIdRange(int firstId, int count) => firstId >= 1 && count >= 1 && firstId - 1 <= int.MaxValue - count;

    /// <summary>
    /// A response body's records as they stream in (never buffered whole), read into <see cref="RecordJson"/> as a client generated
    /// from the OpenAPI document would. A JSON null in the array is IT2004 (malformed); JSON errors are the caller's to classify.
    /// </summary>
    public static async IAsyncEnumerable<ServiceRecord> ReadRecordsAsync(Stream body, [System.Runtime.CompilerServices.EnumeratorCancellation] CancellationToken cancellationToken)
    {
        await foreach (var record in JsonSerializer.DeserializeAsyncEnumerable(body, RestJsonContext.Default.RecordJson, cancellationToken).ConfigureAwait(false))
            yield return record?.ToRecord() ?? throw new IntegrationException(ErrorCodes.MalformedMessage, "The records' JSON array holds a null where a record belongs.");
    }
}

/// <summary>
/// A record as the client reads it: a class with settable properties, the shape an OpenAPI client generator makes, and the one
/// System.Text.Json fills directly. Into the positional <see cref="ServiceRecord"/> it goes through constructor arguments, which
/// costs more per record.
/// </summary>
public sealed class RecordJson
{
    public int Id { get; set; }
    public string Desc { get; set; } = "";
    public double Value { get; set; }
    public DateTime CreationDate { get; set; }
    public string? StringField1 { get; set; }
    public string? StringField2 { get; set; }

    /// <summary>A bytes payload, base64 in JSON; absent when the row has none.</summary>
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public byte[]? Payload { get; set; }

    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public string? PayloadText { get; set; }

    public ServiceRecord ToRecord() => new(Id, Desc, Value, CreationDate, StringField1, StringField2, Payload, PayloadText);
}

/// <summary>
/// The JSON of a record, by System.Text.Json's source generator (no reflection at run time): the web defaults (camelCase names),
/// doubles in their shortest round-trip form, dates in ISO 8601 to the tick, text escaped as JSON requires (CR, tab, quotes,
/// control and non-ASCII characters). Every value reads back equal, bit for bit and tick for tick.
/// </summary>
[JsonSourceGenerationOptions(JsonSerializerDefaults.Web, NumberHandling = JsonNumberHandling.Strict)]
[JsonSerializable(typeof(ServiceRecord))]
[JsonSerializable(typeof(ServiceRecord[]))]
[JsonSerializable(typeof(List<ServiceRecord>))]
[JsonSerializable(typeof(RecordJson))]
[JsonSerializable(typeof(RestProblem))]
public sealed partial class RestJsonContext : JsonSerializerContext;

/// <summary>The fields of an RFC 9457 problem the client reads: the status and the coded detail.</summary>
public sealed record RestProblem(string? Title, int? Status, string? Detail);
