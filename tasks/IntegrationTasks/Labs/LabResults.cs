using System.Text.Json;
using IntegrationTasks.Results;

namespace IntegrationTasks.Labs;

/// <summary>
/// Where the labs keep their results (a JSON file each, beside the transports' results); the report finds each lab's section
/// below (<see cref="IReportSection"/>) and adds those whose results are in its folder.
/// </summary>
public static class LabResults
{
    internal static void Save<T>(string directory, string fileName, T value)
    {
        Directory.CreateDirectory(directory);
        File.WriteAllText(Path.Combine(directory, fileName), JsonSerializer.Serialize(value, JsonFiles.Options));
    }

    internal static T? Load<T>(string directory, string fileName) where T : class
    {
        var path = Path.Combine(directory, fileName);
        try
        {
            return File.Exists(path) ? JsonSerializer.Deserialize<T>(File.ReadAllText(path), JsonFiles.Options) : null;
        }
        catch (JsonException)
        {
            return null;
        }
    }

}

internal sealed class IoLabSection : ReportSection<IoLabReport.Run>
{
    public override int Order => 1;
    protected override IoLabReport.Run? LoadResults(string directory) => IoLabReport.Load(directory);
    protected override ReportDocument Document(IoLabReport.Run results) => IoLabReport.Document(results);
}

internal sealed class StarvationSection : ReportSection<List<StarvationRun>>
{
    public override int Order => 2;
    protected override List<StarvationRun>? LoadResults(string directory) => StarvationReport.Load(directory);
    protected override ReportDocument Document(List<StarvationRun> results) => StarvationReport.Document(results);
}

internal sealed class AsyncOverheadSection : ReportSection<List<AsyncOverheadResult>>
{
    public override int Order => 3;
    protected override List<AsyncOverheadResult>? LoadResults(string directory) => AsyncOverheadReport.Load(directory);
    protected override ReportDocument Document(List<AsyncOverheadResult> results) => AsyncOverheadReport.Document(results);
}

internal sealed class StageCostsSection : ReportSection<StageCostsRun>
{
    public override int Order => 4;
    protected override StageCostsRun? LoadResults(string directory) => StageCostsReport.Load(directory);
    protected override ReportDocument Document(StageCostsRun results) => StageCostsReport.Document(results);
}
