namespace IntegrationTasks.Tests;

/// <summary>
/// A report's results.json read back into the types the report wrote it from, so that a test checks a figure as a value (a ratio,
/// a count, a code) rather than as a Markdown cell's wording.
/// </summary>
internal sealed record ResultsJson(
    IReadOnlyDictionary<string, string> Environment,
    IReadOnlyList<TransportSummary> Summaries,
    IReadOnlyList<FailedEntry> Failed,
    IReadOnlyList<NotRunEntry> NotRun,
    IReadOnlyList<FaultRow> Faults,
    IReadOnlyList<NoiseReading> Noise)
{
    /// <summary>The results.json of a results folder (or that file itself).</summary>
    public static ResultsJson Load(string folderOrFile)
    {
        var file = Directory.Exists(folderOrFile) ? Path.Combine(folderOrFile, "results.json") : folderOrFile;
        return JsonSerializer.Deserialize<ResultsJson>(File.ReadAllText(file), IntegrationTasks.Common.JsonFiles.Options)
            ?? throw new InvalidDataException($"{file} holds no results.");
    }

    /// <summary>
    /// The one summary shown under this label (the tables' first cell: "TcpClient2", "TcpClient2 (3 clients)"), at a record count and a
    /// payload size when the report has several.
    /// </summary>
    public TransportSummary Row(string label, int? records = null, int? payloadBytes = null) =>
        Summaries.SingleOrDefault(s => s.Transport == label && (records is null || s.Records == records) && (payloadBytes is null || s.Key.PayloadBytes == payloadBytes))
        ?? throw new AssertFailedException($"No one summary '{label}' in results.json: {string.Join(", ", Summaries.Select(s => s.Transport))}");

    /// <summary>Whether a summary of this label is in the report's tables.</summary>
    public bool HasRow(string label, int? records = null) => Summaries.Any(s => s.Transport == label && (records is null || s.Records == records));

    /// <summary>The fault table's row of a transport (and fault, when several).</summary>
    public FaultRow Fault(string transport, string? fault = null) => Faults.Single(f => f.Transport == transport && (fault is null || f.Fault == fault));
}
