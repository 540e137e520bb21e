using IntegrationTasks.Results;

namespace IntegrationTasks.Exporters;

/// <summary>One file of the report, rendered from the one <see cref="ReportModel"/> (BenchmarkDotNet's exporters over one summary).</summary>
public interface IReportExporter
{
    /// <summary>The file's name in the results folder.</summary>
    string FileName { get; }

    string Render(ReportModel model);
}
