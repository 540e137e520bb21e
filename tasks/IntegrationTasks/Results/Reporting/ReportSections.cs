namespace IntegrationTasks.Results;

/// <summary>
/// A section of the report made above this layer (a lab's results): the report finds every one in the assembly by this
/// interface, as the host finds its modules, so the results layer names none of them. The report's model keeps what it loaded
/// (<see cref="LabSection"/>); the exporters render it.
/// </summary>
public interface IReportSection
{
    /// <summary>Its place among the others (lower first).</summary>
    int Order { get; }

    /// <summary>Its results in <paramref name="directory"/>, or null when it holds none.</summary>
    object? Load(string directory);

    /// <summary>Its results as the report's blocks, which each exporter renders.</summary>
    ReportDocument Document(object results);
}

/// <summary>A lab's results as the report holds them: the data, and the section that makes its blocks.</summary>
public sealed record LabSection(IReportSection Section, object Results)
{
    public ReportDocument Document() => Section.Document(Results);
}

/// <summary>A section's typed results: <see cref="IReportSection"/> with its loaded results' type known.</summary>
public abstract class ReportSection<TResults> : IReportSection where TResults : class
{
    public abstract int Order { get; }

    protected abstract TResults? LoadResults(string directory);

    protected abstract ReportDocument Document(TResults results);

    public object? Load(string directory) => LoadResults(directory);

    public ReportDocument Document(object results) => Document((TResults)results);
}

/// <summary>The sections of the report that <see cref="IReportSection"/>s make.</summary>
public static class ReportSections
{
    private static readonly IReadOnlyList<IReportSection> All = typeof(IReportSection).Assembly.GetTypes()
        .Where(t => typeof(IReportSection).IsAssignableFrom(t) && t is { IsClass: true, IsAbstract: false })
        .Select(t => (IReportSection)Activator.CreateInstance(t, nonPublic: true)!)
        .OrderBy(s => s.Order)
        .ToList();

    /// <summary>Every section with results in <paramref name="directory"/>, in order.</summary>
    public static List<LabSection> In(string directory) =>
        [.. All.Select(s => s.Load(directory) is { } results ? new LabSection(s, results) : null).OfType<LabSection>()];
}
