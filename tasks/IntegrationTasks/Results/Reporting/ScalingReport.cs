using System.Globalization;
using IntegrationTasks.Transfer;

namespace IntegrationTasks.Results;

/// <summary>The scaling section: each transport's fitted line (<see cref="Scaling"/>) as a table, and where two lines cross.</summary>
public static class ScalingReport
{
    /// <summary>The scaling table's columns: a transport's fitted line.</summary>
    public static readonly IReadOnlyList<ReportColumn<ScalingFit>> Columns =
    [
        new("transport", "Method", f => f.Transport, Numeric: false),
        new("fixedSeconds", "Fixed cost (s)", f => f.FixedSeconds.ToString("F3", CultureInfo.InvariantCulture)),
        new("microsPerRecord", "Per record (µs)", f => f.MicrosecondsPerRecord.ToString("F2", CultureInfo.InvariantCulture)),
        new("rSquared", "R²", f => f.RSquared.ToString("F3", CultureInfo.InvariantCulture)),
        new("sizes", "Sizes", f => f.Sizes.ToString(CultureInfo.InvariantCulture)),
        new("shape", "Shape", f => f.Linearity, Numeric: false),
    ];

    public static string Markdown(IReadOnlyList<Measurement> measurements) => Section(measurements).Markdown(before: "\n");

    public static ReportDocument Section(IReadOnlyList<Measurement> measurements)
    {
        var fits = Scaling.Fit(measurements);
        if (fits.Count == 0)
            return new ReportDocument();
        var doc = new ReportDocument().AddHeading(2, "Scaling: time = fixed cost + cost per record (least squares over every measured run)").AddTable(Columns, fits);
        var crossings = Crossovers(fits, measurements.Min(m => m.Records), measurements.Max(m => m.Records));
        return crossings.Count == 0 ? doc.AddParagraph("No two lines cross within the measured range.") : doc.AddBullets(crossings);
    }

    /// <summary>Where two fitted lines cross within (a tenth of) the measured range: below it one transport wins, above it the other.</summary>
    public static List<string> Crossovers(IReadOnlyList<ScalingFit> fits, int minRecords, int maxRecords)
    {
        var lines = new List<string>();
        for (var i = 0; i < fits.Count; i++)
        {
            for (var j = i + 1; j < fits.Count; j++)
            {
                var (a, b) = (fits[i], fits[j]); // a has the lower cost per record
                if (a.MicrosecondsPerRecord == b.MicrosecondsPerRecord || a.FixedSeconds <= b.FixedSeconds)
                    continue;
                var crossing = (a.FixedSeconds - b.FixedSeconds) / ((b.MicrosecondsPerRecord - a.MicrosecondsPerRecord) / 1e6);
                if (crossing >= minRecords / 10.0 && crossing <= maxRecords * 10.0)
                    lines.Add(string.Create(CultureInfo.InvariantCulture,
                        $"{a.Transport} overtakes {b.Transport} above about {crossing:N0} records (its fixed cost is higher, its cost per record lower)."));
            }
        }
        return lines;
    }
}
