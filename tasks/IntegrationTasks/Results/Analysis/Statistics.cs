namespace IntegrationTasks.Results;

/// <summary>
/// Descriptive statistics of one transport × record count over its measured repetitions: mean,
/// median, sample standard deviation, range, the 95% confidence interval of the mean (Student's t)
/// and the values outside Tukey's fences (flagged, never dropped).
/// </summary>
public sealed record Summary(int Count, double Mean, double Median, double StdDev, double Min, double Max)
{
    /// <summary>Half-width of the 95% confidence interval of the mean (0 for a single value; see <see cref="HasInterval"/>).</summary>
    public double Ci95 { get; init; }

    /// <summary>Below this many runs an interval (and any "best" or "different") means too little to print: two runs give t = 12.7.</summary>
    public const int MinimumForInterval = 3;

    public bool HasInterval => Count >= MinimumForInterval;

    /// <summary>What a table's interval column shows: the half-width, or why there is none.</summary>
    public string IntervalCell(string format = "F3") =>
        HasInterval ? Ci95.ToString(format, System.Globalization.CultureInfo.InvariantCulture) : $"n/a ({Count} run{(Count == 1 ? "" : "s")})";

    /// <summary>The mean with its interval, "1.234 ±0.056", or the mean alone with why it has none.</summary>
    public string MeanWithInterval(string format = "F3") =>
        Mean.ToString(format, System.Globalization.CultureInfo.InvariantCulture)
        + (HasInterval ? " ±" + Ci95.ToString(format, System.Globalization.CultureInfo.InvariantCulture) : $" (no interval: {Count} run{(Count == 1 ? "" : "s")})");

    /// <summary>Values beyond 1.5 interquartile ranges outside the quartiles.</summary>
    public IReadOnlyList<double> Outliers { get; init; } = [];

    public static Summary Of(IReadOnlyCollection<double> values)
    {
        if (values.Count == 0)
            throw new ArgumentException("No values to summarise.", nameof(values));
        var sorted = values.Order().ToArray();
        var n = sorted.Length;
        var mean = sorted.Average();
        var median = Quantile(sorted, 0.5);
        // Sample standard deviation (n − 1): the repetitions are a sample of possible runs.
        var stdDev = n > 1 ? Math.Sqrt(sorted.Sum(v => (v - mean) * (v - mean)) / (n - 1)) : 0;
        var ci = n > 1 ? StudentT.Quantile(0.975, n - 1) * stdDev / Math.Sqrt(n) : 0;
        var (q1, q3) = (Quantile(sorted, 0.25), Quantile(sorted, 0.75));
        var fence = 1.5 * (q3 - q1);
        var outliers = n >= 4 ? sorted.Where(v => v < q1 - fence || v > q3 + fence).ToList() : [];
        return new Summary(n, mean, median, stdDev, sorted[0], sorted[^1]) { Ci95 = ci, Outliers = outliers };
    }

    /// <summary>Linear interpolation between order statistics (the common "type 7" definition).</summary>
    public static double Quantile(IReadOnlyList<double> sorted, double p)
    {
        var position = (sorted.Count - 1) * p;
        var lower = (int)Math.Floor(position);
        var upper = Math.Min(lower + 1, sorted.Count - 1);
        return sorted[lower] + (position - lower) * (sorted[upper] - sorted[lower]);
    }
}

/// <summary>Welch's t-test: are two transports' times different, or indistinguishable on this evidence?</summary>
public static class Welch
{
    /// <summary>Below this p-value two times (two neighbours in the ranking, one run and the next) are called different; above, indistinguishable.</summary>
    public const double SignificanceLevel = 0.05;

    /// <summary>Half-width of the 95% confidence interval of the difference of two means (Welch–Satterthwaite degrees of freedom).</summary>
    public static double DifferenceCi95(Summary a, Summary b)
    {
        var va = a.Count > 1 ? a.StdDev * a.StdDev / a.Count : 0;
        var vb = b.Count > 1 ? b.StdDev * b.StdDev / b.Count : 0;
        if (va + vb == 0)
            return 0;
        var df = (va + vb) * (va + vb) / ((a.Count > 1 ? va * va / (a.Count - 1) : 0) + (b.Count > 1 ? vb * vb / (b.Count - 1) : 0));
        return StudentT.Quantile(0.975, df) * Math.Sqrt(va + vb);
    }

    /// <summary>Two-sided p-value for a difference between the means of two samples with unequal variances.</summary>
    public static double PValue(Summary a, Summary b)
    {
        if (a.Count < 2 || b.Count < 2)
            return double.NaN;
        var va = a.StdDev * a.StdDev / a.Count;
        var vb = b.StdDev * b.StdDev / b.Count;
        if (va + vb == 0)
            return a.Mean == b.Mean ? 1 : 0;
        var t = (a.Mean - b.Mean) / Math.Sqrt(va + vb);
        var df = (va + vb) * (va + vb) / (va * va / (a.Count - 1) + vb * vb / (b.Count - 1));
        return 2 * (1 - StudentT.Cdf(Math.Abs(t), df));
    }
}

/// <summary>How many rounds a figure needs: the fewest n for a condition that, once it holds, holds for every larger n.</summary>
public static class MonotoneSearch
{
    /// <summary>The fewest n ≥ <paramref name="from"/> for which <paramref name="holds"/> is true (doubling, then halving the gap); null past ten million.</summary>
    public static int? Fewest(int from, Func<int, bool> holds)
    {
        int low = from, high = from;
        while (!holds(high))
        {
            low = high;
            high *= 2;
            if (high > 10_000_000)
                return null;
        }
        while (high - low > 1)
        {
            var middle = low + (high - low) / 2;
            if (holds(middle))
                high = middle;
            else
                low = middle;
        }
        return high;
    }
}

/// <summary>Student's t distribution, through the regularized incomplete beta function.</summary>
public static class StudentT
{
    public static double Cdf(double t, double df)
    {
        var x = df / (df + t * t);
        var tail = 0.5 * IncompleteBeta(df / 2, 0.5, x);
        return t >= 0 ? 1 - tail : tail;
    }

    /// <summary>The p-quantile, by bisection on the CDF (monotonic; 200 halvings are far below double precision).</summary>
    public static double Quantile(double p, double df)
    {
        double low = -1e3, high = 1e3;
        for (var i = 0; i < 200; i++)
        {
            var mid = (low + high) / 2;
            if (Cdf(mid, df) < p)
                low = mid;
            else
                high = mid;
        }
        return (low + high) / 2;
    }

    /// <summary>I_x(a, b) by its continued fraction (Lentz's method), using the symmetry for fast convergence.</summary>
    public static double IncompleteBeta(double a, double b, double x)
    {
        if (x <= 0)
            return 0;
        if (x >= 1)
            return 1;
        var front = Math.Exp(LogGamma(a + b) - LogGamma(a) - LogGamma(b) + a * Math.Log(x) + b * Math.Log(1 - x));
        if (x > (a + 1) / (a + b + 2))
            return 1 - IncompleteBeta(b, a, 1 - x);
        const double tiny = 1e-300;
        double f = 1, c = 1, d = 0;
        for (var i = 0; i <= 400; i++)
        {
            var m = i / 2;
            double numerator;
            if (i == 0)
                numerator = 1;
            else if (i % 2 == 0)
                numerator = m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m));
            else
                numerator = -((a + m) * (a + b + m) * x) / ((a + 2 * m) * (a + 2 * m + 1));
            d = 1 + numerator * d;
            d = Math.Abs(d) < tiny ? tiny : d;
            d = 1 / d;
            c = 1 + numerator / c;
            c = Math.Abs(c) < tiny ? tiny : c;
            var cd = c * d;
            f *= cd;
            if (Math.Abs(1 - cd) < 1e-15)
                break;
        }
        return front * (f - 1) / a;
    }

    /// <summary>Lanczos approximation of ln Γ(x), x &gt; 0.</summary>
    public static double LogGamma(double x)
    {
        double[] g = [76.18009172947146, -86.50532032941677, 24.01409824083091, -1.231739572450155, 0.1208650973866179e-2, -0.5395239384953e-5];
        var y = x;
        var tmp = x + 5.5;
        tmp -= (x + 0.5) * Math.Log(tmp);
        var series = 1.000000000190015;
        foreach (var coefficient in g)
            series += coefficient / ++y;
        return -tmp + Math.Log(2.5066282746310005 * series / x);
    }
}
