namespace IntegrationTasks.Data;

/// <summary>One row of the series' tables (ServiceTable on the server, ClientTable on the client).</summary>
public sealed record ServiceRecord(
    int Id,
    string Desc,
    double Value,
    DateTime CreationDate,
    string? StringField1,
    string? StringField2)
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
        && string.Equals(StringField2, other.StringField2, StringComparison.Ordinal);
}
