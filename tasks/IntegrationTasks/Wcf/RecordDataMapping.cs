
namespace IntegrationTasks.Wcf;

/// <summary>Between the data layer's rows and the service's data contract.</summary>
public static class RecordDataMapping
{
    public static RecordData ToData(this ServiceRecord record) => new()
    {
        Id = record.Id, Desc = record.Desc, Value = record.Value, CreationDate = record.CreationDate,
        StringField1 = record.StringField1, StringField2 = record.StringField2, Payload = record.Payload, PayloadText = record.PayloadText,
    };

    public static ServiceRecord ToRecord(this RecordData data) =>
        new(data.Id, data.Desc, data.Value, data.CreationDate, data.StringField1, data.StringField2, data.Payload, data.PayloadText);
}
