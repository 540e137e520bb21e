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

/// <summary>The runs under injected faults, a row per transport × fault × record count.</summary>
public static class FaultRuns
{
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
}
