using System.Globalization;
using IntegrationTasks.Transfer;

namespace IntegrationTasks.Results;

/// <summary>A transport's time as fixed cost + cost per record, fitted over every measured run of every record count.</summary>
public sealed record ScalingFit(string Transport, double FixedSeconds, double MicrosecondsPerRecord, double RSquared, int Sizes, string Linearity);

/// <summary>Fits each transport's cost line, finds where lines cross, and says when a transport is not linear in records.</summary>
public static class Scaling
{
    public static List<ScalingFit> Fit(IEnumerable<Measurement> measurements)
    {
        var fits = new List<ScalingFit>();
        foreach (var transport in measurements.Where(m => !m.Warmup).GroupBy(m => m.Transport))
        {
            var points = transport.Select(m => (X: (double)m.Records, Y: m.ElapsedSeconds)).ToList();
            var sizes = points.Select(p => p.X).Distinct().Count();
            if (sizes < 2)
                continue;
            var meanX = points.Average(p => p.X);
            var meanY = points.Average(p => p.Y);
            var sxx = points.Sum(p => (p.X - meanX) * (p.X - meanX));
            var sxy = points.Sum(p => (p.X - meanX) * (p.Y - meanY));
            var slope = sxy / sxx;
            var intercept = meanY - slope * meanX;
            var ssTotal = points.Sum(p => (p.Y - meanY) * (p.Y - meanY));
            var ssResidual = points.Sum(p => Math.Pow(p.Y - (intercept + slope * p.X), 2));
            fits.Add(new ScalingFit(transport.Key, intercept, slope * 1e6, ssTotal > 0 ? 1 - ssResidual / ssTotal : 1, sizes,
                Linearity(transport.ToList())));
        }
        return fits.OrderBy(f => f.MicrosecondsPerRecord).ToList();
    }

    /// <summary>
    /// Compares the marginal cost per record between the two smallest and the two largest sizes: a
    /// transport whose records get markedly dearer (or cheaper) as they grow is not linear.
    /// </summary>
    private static string Linearity(IReadOnlyList<Measurement> runs)
    {
        var means = runs.GroupBy(r => r.Records).OrderBy(g => g.Key).Select(g => (X: (double)g.Key, Y: g.Average(r => r.ElapsedSeconds))).ToList();
        if (means.Count < 3)
            return "needs 3 sizes to tell";
        var early = (means[1].Y - means[0].Y) / (means[1].X - means[0].X);
        var late = (means[^1].Y - means[^2].Y) / (means[^1].X - means[^2].X);
        if (early <= 0)
            return "fixed costs dominate the small sizes";
        var ratio = late / early;
        return ratio switch
        {
            > 1.5 => string.Create(CultureInfo.InvariantCulture, $"not linear: records {ratio:F1}× dearer at the large sizes"),
            < 0.67 => string.Create(CultureInfo.InvariantCulture, $"not linear: records {1 / ratio:F1}× cheaper at the large sizes"),
            _ => "linear",
        };
    }
}
