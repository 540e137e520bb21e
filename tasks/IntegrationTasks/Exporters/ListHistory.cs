using System.Globalization;
using IntegrationTasks.Results;

namespace IntegrationTasks.Exporters;

/// <summary>The RunAlls in the results database, one line each: the ids -t:Compare takes.</summary>
public sealed class ListHistory : IntegrationTask
{
    public string HistoryProvider { get; set; } = "Sqlite";
    [Required] public string HistoryConnString { get; set; } = "";

    [Output] public long[] Ids { get; private set; } = [];

    protected override async Task ExecuteAsync(CancellationToken cancellationToken)
    {
        var history = ResultsHistory.Open(HistoryProvider, HistoryConnString);
        var entries = await history.ListAsync(cancellationToken).ConfigureAwait(false);
        Ids = [.. entries.Select(e => e.Id)];
        var table = ReportTable.Markdown(Columns, entries);
        Log.LogMessage(MessageImportance.High, "{0} RunAll(s) in {1}:{2}{3}", entries.Count, history.Database.Describe(), Environment.NewLine, table);
    }

    private static readonly IReadOnlyList<ReportColumn<HistoryEntry>> Columns =
    [
        new("id", "Id", e => e.Id.ToString(CultureInfo.InvariantCulture)),
        new("started", "Started (UTC)", e => e.StartedUtc.ToString("yyyy-MM-dd HH:mm:ss", CultureInfo.InvariantCulture), Numeric: false),
        new("status", "Status", e => e.Status == HistoryEntry.Complete ? "complete" : "not finished (stopped, or still running)", Numeric: false),
        new("commit", "Commit", e => e.Commit, Numeric: false),
        new("machine", "Machine", e => e.Machine, Numeric: false),
        new("runs", "Runs", e => e.Runs.ToString(CultureInfo.InvariantCulture)),
        new("results", "Results folder", e => e.ResultsDirectory, Numeric: false),
    ];
}
