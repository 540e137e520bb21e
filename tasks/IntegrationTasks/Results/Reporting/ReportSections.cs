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

    string Markdown(object results);

    string Html(object results);
}

/// <summary>A lab's results as the report holds them: the data, and the section that renders it for each exporter.</summary>
public sealed record LabSection(IReportSection Section, object Results)
{
    public string Markdown() => Section.Markdown(Results);

    public string Html() => Section.Html(Results);
}

/// <summary>A section's typed results: <see cref="IReportSection"/> with its loaded results' type known.</summary>
public abstract class ReportSection<TResults> : IReportSection where TResults : class
{
    public abstract int Order { get; }

    protected abstract TResults? LoadResults(string directory);

    protected abstract string Markdown(TResults results);

    protected abstract string Html(TResults results);

    public object? Load(string directory) => LoadResults(directory);

    public string Markdown(object results) => Markdown((TResults)results);

    public string Html(object results) => Html((TResults)results);
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
