using System.Globalization;
using IntegrationTasks.Results;

namespace IntegrationTasks.Exporters;

/// <summary>The report's fault table: transport × fault → resumed or failed cleanly, rows lost and duplicated, time to recover.</summary>
public static class FaultTable
{
    private static readonly CultureInfo Invariant = CultureInfo.InvariantCulture;

    /// <summary>The fault table's columns: a row is a transport under one fault at one record count.</summary>
    public static readonly IReadOnlyList<ReportColumn<FaultRow>> Columns =
    [
        new("transport", "Transport", r => r.Transport, Numeric: false),
        new("fault", "Fault", r => r.Fault, Numeric: false),
        new("records", "Records", r => r.Records.ToString("N0", Invariant)),
        new("runs", "Runs", r => r.Runs.ToString(Invariant)),
        new("outcome", "Outcome", r => r.Outcome + Committed(r), Numeric: false),
        new("rowsLost", "Rows lost", r => r.RowsLost.ToString(Invariant)),
        new("rowsDuplicated", "Rows duplicated", r => r.RowsDuplicated.ToString(Invariant)),
        new("recoverySeconds", "Time to recover (s)", r => Mean(r.RecoverySeconds)),
        new("meanSeconds", "Mean time (s)", r => Mean(r.Seconds)),
    ];

    public static string Markdown(IReadOnlyList<FaultRow> rows)
    {
        if (rows.Count == 0)
            return "";
        return "\n## Faults (one injected per repetition; warm-ups left out)\n\n" + ReportTable.Markdown(Columns, rows) + """

            How to read it: "resumed" runs reconnected (with backoff) and asked only for the batches not yet committed, and ended
            verified row by row; "failed cleanly" runs stopped with the code named and left whole batches only (checked: none
            partial, none twice) — the rows they did not move are reported by the error, not lost. "Rode it out": the fault landed
            (a silence, or a server killed behind a broker) and delayed the transfer without breaking it. "Not injected": the server
            sent fewer bytes than FaultAfterBytes, so no fault landed and the run says nothing about it. Time to recover: from the break to the first commit after it.
            Rows lost and duplicated come from the verification of each run and must be 0.

            """;
    }

    /// <summary>The same table in the page, a run that lost or duplicated rows marked.</summary>
    public static string Html(IReadOnlyList<FaultRow> rows) => rows.Count == 0 ? ""
        : "<h2>Faults</h2>" + ReportTable.Html(Columns, rows, " id=\"faults\"", r => r.RowsLost > 0 || r.RowsDuplicated > 0 ? " class=\"bad\"" : "");

    private static string Committed(FaultRow row) => row.FailedCleanly > 0
        ? string.Create(Invariant, $"; {row.RecordsCommittedWhenFailed / row.FailedCleanly:N0} records committed per failed run, in whole batches")
        : "";

    private static string Mean(Summary? summary) => summary is null ? "–" : summary.MeanWithInterval();
}
