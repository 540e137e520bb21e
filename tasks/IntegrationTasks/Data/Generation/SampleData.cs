namespace IntegrationTasks.Data;

/// <summary>
/// Deterministic rows in the series' shape. Each row depends only on (seed, id), so topping a table
/// up gives the same rows as generating it in one go. About one row in three carries a value that
/// breaks naive formats: fractional, huge and subnormal doubles, afternoon timestamps with
/// milliseconds, markup characters, quotes, non-ASCII text, line breaks, empty strings and NULLs.
/// </summary>
public static class SampleData
{
    public const int DefaultSeed = 2014;
    private static readonly DateTime Epoch = new(2014, 5, 10, 0, 0, 0, DateTimeKind.Unspecified);

    public static ServiceRecord Create(int id, int seed = DefaultSeed)
    {
        var h = Mix((ulong)(uint)seed << 32 | (uint)id);
        return new ServiceRecord(id, Desc(id, h), Value(id, h), CreationDate(h), Field(1, id, h >> 20), Field(2, id, h >> 40));
    }

    private static string Desc(int id, ulong h) => (h % 10) switch
    {
        3 => $"Server Value {id} <b class=\"x\">&amp; 'quoted'</b> & < >",
        7 => $"Server Value {id} – ação São Paulo, Ærøskøbing, 日本語 ✓ 😀",
        _ => $"Server Value {id}",
    };

    private static double Value(int id, ulong h)
    {
        var fraction = (h >> 11) * (1.0 / (1UL << 53)); // uniform in [0, 1)
        return (id % 1000) switch
        {
            998 => double.MaxValue,
            999 => double.Epsilon, // the smallest subnormal
            _ => ((h >> 3) % 6) switch
            {
                0 => (double)(int)(h >> 33),             // the series' Random.Next() integers
                1 => Math.Round(fraction * 1e6, 3) + 0.1, // fractional, not exact in binary
                2 => fraction * 1e308,                    // huge
                3 => fraction * 1e-300,                   // tiny
                4 => -fraction * 12345.678901234567,      // negative, full 17 digits
                _ => id / 3.0,
            },
        };
    }

    private static DateTime CreationDate(ulong h)
    {
        // Any second in about ten years, always with milliseconds: half of them are afternoon hours.
        var seconds = (long)(h % (10L * 365 * 24 * 3600));
        var millis = (long)((h >> 48) % 999) + 1;
        return Epoch.AddTicks(seconds * TimeSpan.TicksPerSecond + millis * TimeSpan.TicksPerMillisecond);
    }

    private static string? Field(int n, int id, ulong h) => (h % 8) switch
    {
        0 => null,
        1 => "",
        2 => $"  padded {n}  ",
        3 => $"line 1\r\nline 2\ttab \"{id}\"",
        _ => $"Useless Field {n}: {(uint)(h >> 8) % 2_147_483_647}",
    };

    /// <summary>SplitMix64 finaliser: a good 64-bit hash of the row key.</summary>
    internal static ulong Mix(ulong z)
    {
        z += 0x9E3779B97F4A7C15UL;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9UL;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBUL;
        return z ^ (z >> 31);
    }
}
