namespace IntegrationTasks.Results;

/// <summary>
/// A section of the report made above this layer (a lab's results): the report finds every one in the assembly by this
/// interface, as the host finds its modules, so the results layer names none of them.
/// </summary>
public interface IReportSection
{
    /// <summary>Its place among the others (lower first).</summary>
    int Order { get; }

    /// <summary>Its Markdown and HTML, or null when <paramref name="directory"/> holds no results of it.</summary>
    (string Markdown, string Html)? Render(string directory);
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
    public static List<(string Markdown, string Html)> In(string directory) =>
        [.. All.Select(s => s.Render(directory)).Where(r => r is not null).Select(r => r!.Value)];
}
