using System.Text.Json;
using IntegrationTasks.Results;
using IntegrationTasks.Common;

namespace IntegrationTasks.Labs;

/// <summary>
/// Where the labs keep their results (a JSON file each, beside the transports' results) and how the
/// suite's report finds them: every lab section present in the results folder is added to it.
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

    /// <summary>The Markdown and HTML sections of every lab with results in this folder.</summary>
    public static List<(string Markdown, string Html)> Sections(string directory)
    {
        var sections = new List<(string, string)>();
        if (IoLabReport.Load(directory) is { } ioLab)
            sections.Add((IoLabReport.Markdown(ioLab), IoLabReport.Html(ioLab)));
        if (StarvationReport.Load(directory) is { } starvation)
            sections.Add((StarvationReport.Markdown(starvation), StarvationReport.Html(starvation)));
        if (AsyncOverheadReport.Load(directory) is { } asyncOverhead)
            sections.Add((AsyncOverheadReport.Markdown(asyncOverhead), AsyncOverheadReport.Html(asyncOverhead)));
        if (StageCostsReport.Load(directory) is { } stages)
            sections.Add((StageCostsReport.Markdown(stages), StageCostsReport.Html(stages)));
        return sections;
    }
}
