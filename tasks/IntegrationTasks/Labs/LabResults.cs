using System.Text.Json;
using IntegrationTasks.Results;
using IntegrationTasks.Common;

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

internal sealed class IoLabSection : IReportSection
{
    public int Order => 1;
    public (string Markdown, string Html)? Render(string directory) => IoLabReport.Load(directory) is { } run ? (IoLabReport.Markdown(run), IoLabReport.Html(run)) : null;
}

internal sealed class StarvationSection : IReportSection
{
    public int Order => 2;
    public (string Markdown, string Html)? Render(string directory) =>
        StarvationReport.Load(directory) is { } run ? (StarvationReport.Markdown(run), StarvationReport.Html(run)) : null;
}

internal sealed class AsyncOverheadSection : IReportSection
{
    public int Order => 3;
    public (string Markdown, string Html)? Render(string directory) =>
        AsyncOverheadReport.Load(directory) is { } run ? (AsyncOverheadReport.Markdown(run), AsyncOverheadReport.Html(run)) : null;
}

internal sealed class StageCostsSection : IReportSection
{
    public int Order => 4;
    public (string Markdown, string Html)? Render(string directory) =>
        StageCostsReport.Load(directory) is { } run ? (StageCostsReport.Markdown(run), StageCostsReport.Html(run)) : null;
}
