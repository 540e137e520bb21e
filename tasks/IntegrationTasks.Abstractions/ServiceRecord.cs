namespace IntegrationTasks.Abstractions;

/// <summary>
/// One row of the series' tables (ServiceTable on the server, ClientTable on the client). A row may carry a payload beside the
/// series' six fields (generated with the data set): bytes, or text; never both, and neither unless the data set was generated with one.
/// </summary>
public sealed record ServiceRecord(
    int Id,
    string Desc,
    double Value,
    DateTime CreationDate,
    string? StringField1,
    string? StringField2,
    [property: System.Text.Json.Serialization.JsonIgnore(Condition = System.Text.Json.Serialization.JsonIgnoreCondition.WhenWritingNull)]
    byte[]? Payload = null,
    [property: System.Text.Json.Serialization.JsonIgnore(Condition = System.Text.Json.Serialization.JsonIgnoreCondition.WhenWritingNull)]
    string? PayloadText = null)
{
    /// <summary>
    /// Exact equality for verification: doubles compared bit for bit (so -0.0 differs from 0.0),
    /// dates by ticks, strings ordinally with NULL distinct from empty.
    /// </summary>
    public bool SameValuesAs(ServiceRecord other) =>
        Id == other.Id
        && string.Equals(Desc, other.Desc, StringComparison.Ordinal)
        && BitConverter.DoubleToInt64Bits(Value) == BitConverter.DoubleToInt64Bits(other.Value)
        && CreationDate.Ticks == other.CreationDate.Ticks
        && string.Equals(StringField1, other.StringField1, StringComparison.Ordinal)
        && string.Equals(StringField2, other.StringField2, StringComparison.Ordinal)
        && SamePayloadAs(other);

    /// <summary>
    /// Two records are equal when their values are (<see cref="SameValuesAs"/>): a payload's bytes compared, not the array holding
    /// them, as a record's generated equality would.
    /// </summary>
    public bool Equals(ServiceRecord? other) => other is not null && SameValuesAs(other);

    /// <inheritdoc/>
    public override int GetHashCode()
    {
        var hash = new HashCode();
        hash.Add(Id);
        hash.Add(Desc, StringComparer.Ordinal);
        hash.Add(BitConverter.DoubleToInt64Bits(Value));
        hash.Add(CreationDate.Ticks);
        hash.Add(StringField1, StringComparer.Ordinal);
        hash.Add(StringField2, StringComparer.Ordinal);
        hash.AddBytes(Payload);
        hash.Add(Payload is null);
        hash.Add(PayloadText, StringComparer.Ordinal);
        return hash.ToHashCode();
    }

    /// <summary>Payloads compared byte for byte (text ordinally), NULL distinct from empty.</summary>
    public bool SamePayloadAs(ServiceRecord other) =>
        (Payload is null ? other.Payload is null : other.Payload is not null && Payload.AsSpan().SequenceEqual(other.Payload))
        && string.Equals(PayloadText, other.PayloadText, StringComparison.Ordinal);

    /// <summary>The payload's size in bytes as it is stored (text as UTF-8); 0 without one.</summary>
    [System.Text.Json.Serialization.JsonIgnore]
    public int PayloadLength => Payload?.Length ?? (PayloadText is null ? 0 : System.Text.Encoding.UTF8.GetByteCount(PayloadText));
}
