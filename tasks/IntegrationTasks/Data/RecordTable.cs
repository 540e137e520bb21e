namespace IntegrationTasks.Data;

/// <summary>The two tables of the series; same shape, different names for the key and description.</summary>
public sealed record RecordTable(string Name, string IdColumn, string DescColumn)
{
    public static readonly RecordTable Service = new("ServiceTable", "ServiceTableID", "DescServiceTable");
    public static readonly RecordTable Client = new("ClientTable", "ClientTableID", "DescClientTable");

    public string ColumnList => $"{IdColumn}, {DescColumn}, Value, CreationDate, StringField1, StringField2, Payload, PayloadText";

    public const int StringLength = 200;
}
