using System.Globalization;

namespace IntegrationTasks.Network;

/// <summary>
/// The network between client and server: a name, the round trip the delay relay adds and the bandwidth <c>tbf</c>
/// allows on the link (null: not shaped). Loopback adds nothing.
/// </summary>
public sealed record NetworkProfile(string Name, double LatencyMs, double? BandwidthMbit)
{
    public static readonly NetworkProfile Loopback = new("Loopback", 0, null);

    /// <summary>The series' two machines: a 2014 gigabit LAN.</summary>
    public static readonly NetworkProfile Lan2014 = new("Lan2014", 0.2, 1000);

    public static readonly NetworkProfile Wan = new("Wan", 40, 100);

    public bool AddsLatency => LatencyMs > 0;

    /// <summary>A profile by name, with LatencyMs and BandwidthMbit (when given) overriding it; "Custom" when only they are given.</summary>
    public static NetworkProfile Parse(string? name, string? latencyMs, string? bandwidthMbit)
    {
        var profile = (name ?? "").Trim().ToLowerInvariant() switch
        {
            "" or "loopback" => Loopback,
            "lan2014" => Lan2014,
            "wan" => Wan,
            "custom" => Loopback with { Name = "Custom" },
            _ => throw new IntegrationException(ErrorCodes.InvalidParameter, $"Unknown Network '{name}'. Use Loopback, Lan2014 or Wan (and LatencyMs, BandwidthMbit for others)."),
        };
        if (!string.IsNullOrWhiteSpace(latencyMs))
            profile = profile with { Name = "Custom", LatencyMs = Number(latencyMs, "LatencyMs", 0) };
        if (!string.IsNullOrWhiteSpace(bandwidthMbit))
            profile = profile with { Name = "Custom", BandwidthMbit = Number(bandwidthMbit, "BandwidthMbit", 0.01) };
        return profile;
    }

    private static double Number(string text, string property, double minimum) =>
        double.TryParse(text, NumberStyles.Float, CultureInfo.InvariantCulture, out var value) && value >= minimum && double.IsFinite(value)
            ? value
            : throw new IntegrationException(ErrorCodes.InvalidParameter, $"{property} must be a number ≥ {minimum.ToString(CultureInfo.InvariantCulture)} (was '{text}').");

    /// <summary>For results and headings: "Wan (40 ms round trip, 100 Mbit/s)".</summary>
    public string Describe() => Name == "Loopback" && !AddsLatency && BandwidthMbit is null
        ? "Loopback (no latency added, not shaped)"
        : string.Create(CultureInfo.InvariantCulture,
            $"{Name} ({LatencyMs:0.###} ms round trip, {(BandwidthMbit is { } b ? $"{b:0.###} Mbit/s" : "bandwidth not shaped")})");
}
