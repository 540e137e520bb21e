namespace IntegrationTasks.Results;

/// <summary>Descriptive statistics of one transport × record count over its repetitions.</summary>
public sealed record Summary(int Count, double Mean, double Median, double StdDev, double Min, double Max)
{
    public static Summary Of(IReadOnlyCollection<double> values)
    {
        if (values.Count == 0)
            throw new ArgumentException("No values to summarise.", nameof(values));
        var sorted = values.Order().ToArray();
        var n = sorted.Length;
        var mean = sorted.Average();
        var median = n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
        // Sample standard deviation (n − 1): the repetitions are a sample of possible runs.
        var stdDev = n > 1 ? Math.Sqrt(sorted.Sum(v => (v - mean) * (v - mean)) / (n - 1)) : 0;
        return new Summary(n, mean, median, stdDev, sorted[0], sorted[^1]);
    }
}
