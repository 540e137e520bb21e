using System.Runtime.InteropServices;
using IntegrationTasks.Common;
using Microsoft.Build.Framework;

namespace IntegrationTasks.Results;

/// <summary>Summarises the results log into JSON, CSV and Markdown, and prints the summary.</summary>
public sealed class WriteReport : IntegrationTask
{
    [Required] public string ResultsFile { get; set; } = "";
    [Required] public string OutputDirectory { get; set; } = "";

    /// <summary>Properties that shaped the run (item spec = name, metadata Value), recorded with the results.</summary>
    public ITaskItem[] RunProperties { get; set; } = [];

    /// <summary>Transports that did not run (item spec = name; metadata Reason, Fix, SeriesSeconds, Replacement).</summary>
    public ITaskItem[] NotRun { get; set; } = [];

    [Output] public string[] Files { get; private set; } = [];

    protected override Task ExecuteAsync(CancellationToken cancellationToken)
    {
        var measurements = MeasurementLog.Read(ResultsFile);
        if (measurements.Count == 0)
            throw new IntegrationException(ErrorCodes.ResultsUnreadable, $"{ResultsFile} holds no measurements.");
        var environment = new Dictionary<string, string>
        {
            ["Date (UTC)"] = DateTimeOffset.UtcNow.ToString("yyyy-MM-dd HH:mm:ss", System.Globalization.CultureInfo.InvariantCulture),
            ["OS"] = RuntimeInformation.OSDescription,
            ["Cores"] = Environment.ProcessorCount.ToString(System.Globalization.CultureInfo.InvariantCulture),
            [".NET"] = RuntimeInformation.FrameworkDescription,
        };
        foreach (var property in RunProperties)
            environment[property.ItemSpec] = property.GetMetadata("Value");
        var notRun = NotRun.Select(i => new NotRunEntry(i.ItemSpec, i.GetMetadata("Reason"), i.GetMetadata("Fix"),
            i.GetMetadata("SeriesSeconds"), i.GetMetadata("Replacement"))).ToList();
        Files = [.. ReportWriter.Write(OutputDirectory, measurements, environment, notRun)];
        foreach (var entry in notRun)
            Log.LogMessage(MessageImportance.High, "Not run: {0}: {1}{2}", entry.Transport, entry.Reason,
                entry.Fix.Length > 0 ? $" Fix: {entry.Fix}" : "");
        Log.LogMessage(MessageImportance.High, "Results ({0} verified runs):{1}{2}", measurements.Count, Environment.NewLine,
            ReportWriter.ConsoleSummary(ReportWriter.Summarise(measurements)));
        Log.LogMessage(MessageImportance.High, "Report: {0}", string.Join(", ", Files));
        return Task.CompletedTask;
    }
}
