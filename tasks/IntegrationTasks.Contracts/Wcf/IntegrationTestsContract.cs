using System.Runtime.Serialization;
using System.ServiceModel;

namespace IntegrationTasks.Wcf;

/// <summary>
/// The series' IntegrationTestsService, served over SOAP 1.1 (BasicHttpBinding) and net.tcp (NetTcpBinding):
/// one record by ID; a batch by ID range, looked up one ID after another; the same batch with its
/// per-record lookups started without waiting for each other (bounded), gathered in order.
/// </summary>
[ServiceContract(Name = ServiceNames.Contract, Namespace = ServiceNames.Namespace)]
public interface IIntegrationTestsService
{
    [OperationContract]
    Task<RecordData?> GetRecord(int id);

    [OperationContract]
    Task<RecordData[]> GetRecords(int firstId, int count);

    [OperationContract]
    Task<RecordData[]> GetRecordsConcurrently(int firstId, int count);
}

/// <summary>The client's view of the same contract: every operation also as a Task, for the asynchronous variants.</summary>
[ServiceContract(Name = ServiceNames.Contract, Namespace = ServiceNames.Namespace)]
public interface IIntegrationTestsClient
{
    [OperationContract]
    RecordData? GetRecord(int id);

    [OperationContract(Name = "GetRecords")]
    RecordData[] GetRecords(int firstId, int count);

    [OperationContract(Name = "GetRecords")]
    Task<RecordData[]> GetRecordsAsync(int firstId, int count);

    [OperationContract(Name = "GetRecordsConcurrently")]
    RecordData[] GetRecordsConcurrently(int firstId, int count);

    [OperationContract(Name = "GetRecordsConcurrently")]
    Task<RecordData[]> GetRecordsConcurrentlyAsync(int firstId, int count);
}

public static class ServiceNames
{
    public const string Contract = "IntegrationTestsService";
    public const string Namespace = "urn:integrationtasks:2014";

    /// <summary>The SOAP endpoint's path on Kestrel; its WSDL is at this path + "?wsdl".</summary>
    public const string SoapPath = "/IntegrationTestsService.svc";

    /// <summary>The net.tcp endpoint's path (the Via the client sends).</summary>
    public const string NetTcpPath = "/IntegrationTestsService";

    public static string Action(string operation) => $"{Namespace}/{Contract}/{operation}";
}

/// <summary>A ServiceTable row on the wire: DataContractSerializer writes doubles in round-trip form and DateTime with all 7 fractional digits.</summary>
[DataContract(Name = "Record", Namespace = ServiceNames.Namespace)]
public sealed class RecordData
{
    [DataMember(Order = 0)] public int Id { get; set; }
    [DataMember(Order = 1)] public string Desc { get; set; } = "";
    [DataMember(Order = 2)] public double Value { get; set; }
    [DataMember(Order = 3)] public DateTime CreationDate { get; set; }
    [DataMember(Order = 4, EmitDefaultValue = true)] public string? StringField1 { get; set; }
    [DataMember(Order = 5, EmitDefaultValue = true)] public string? StringField2 { get; set; }

    // A row's payload when the data set has one; left out of the message when not (base64 in the text encoding, raw in the binary).
    [DataMember(Order = 6, EmitDefaultValue = false)] public byte[]? Payload { get; set; }
    [DataMember(Order = 7, EmitDefaultValue = false)] public string? PayloadText { get; set; }

}
