using System.Globalization;
using IntegrationTasks.Transfer;

namespace IntegrationTasks.Results;

/// <summary>One transport under one injected fault: how its runs ended, what verification found, what the breaks cost.</summary>
public sealed record FaultRow(string Transport, string Fault, int Records, int Runs, int Resumed, int Unbroken, int FailedCleanly,
    IReadOnlyList<string> FailureCodes, int RowsLost, int RowsDuplicated, int RecordsCommittedWhenFailed, Summary? RecoverySeconds,
    Summary? Seconds, int NotInjected = 0, long? FaultAfterBytes = null, long? MaxBytesFromServer = null)
{
    /// <summary>What happened, said plainly; a run whose fault never landed is never counted as one that survived it.</summary>
    public string Outcome
    {
        get
        {
            var outcome = (Resumed, Unbroken, FailedCleanly) switch
            {
                (0, 0, 0) => "",
                (_, _, > 0) when Resumed + Unbroken == 0 => $"failed cleanly ({string.Join(", ", FailureCodes)})",
                (> 0, _, 0) => "resumed",
                (0, > 0, 0) => "rode it out (no break)",
                _ => $"mixed: {Resumed} resumed, {Unbroken} unbroken, {FailedCleanly} failed cleanly ({string.Join(", ", FailureCodes)})",
            };
            if (NotInjected == 0)
                return outcome;
            var notInjected = string.Create(CultureInfo.InvariantCulture,
                $"not injected in {NotInjected} of {Runs} (the server sent at most {MaxBytesFromServer:N0} bytes, under the {FaultAfterBytes:N0} of FaultAfterBytes)");
            return outcome.Length == 0 ? notInjected : $"{outcome}; {notInjected}";
        }
    }
}

/// <summary>The report's fault table: transport × fault → resumed or failed cleanly, rows lost and duplicated, time to recover.</summary>
public static class FaultTable
{
    private static readonly CultureInfo Invariant = CultureInfo.InvariantCulture;

    public static List<FaultRow> Rows(IEnumerable<Measurement> measurements) =>
        measurements.Where(m => m.Fault is not null && !m.Warmup)
            .GroupBy(m => (m.Transport, Fault: m.Fault!, m.Records, m.PayloadBytes))
            .Select(g =>
            {
                // A run whose fault never landed tells nothing about the fault: counted apart, never as unbroken.
                var notInjected = g.Where(m => m.FaultInjected == false).ToList();
                var completed = g.Where(m => m.Completed && m.FaultInjected != false).ToList();
                var failed = g.Where(m => !m.Completed && m.FaultInjected != false).ToList();
                var resumed = completed.Where(m => m.Reconnects > 0).ToList();
                var recovery = resumed.Where(m => m.RecoverySeconds is not null).Select(m => m.RecoverySeconds!.Value).ToList();
                return new FaultRow(g.Key.Transport, g.Key.Fault, g.Key.Records, g.Count(), resumed.Count, completed.Count - resumed.Count, failed.Count,
                    failed.Select(m => m.FailedWith!).Distinct().Order().ToList(),
                    // A completed run's rows lost: what verification did not find equal; a failed one lost none it did not report (whole batches checked).
                    g.Where(m => m.Completed).Sum(m => m.Records - (m.RowsMatched ?? m.Records)), g.Sum(m => m.RowsDuplicated ?? 0),
                    failed.Sum(m => m.RecordsCommitted ?? 0),
                    recovery.Count > 0 ? Summary.Of(recovery) : null,
                    completed.Count > 0 ? Summary.Of(completed.Select(m => m.ElapsedSeconds).ToList()) : null,
                    notInjected.Count, notInjected.Select(m => m.FaultAfterBytes).FirstOrDefault(),
                    notInjected.Count > 0 ? notInjected.Max(m => m.FaultBytesFromServer ?? 0) : null);
            })
            .OrderBy(r => r.Fault).ThenBy(r => r.Records).ThenBy(r => r.FailedCleanly).ThenBy(r => r.Transport, StringComparer.Ordinal).ToList();

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
