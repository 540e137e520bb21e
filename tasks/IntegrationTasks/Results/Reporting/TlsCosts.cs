namespace IntegrationTasks.Results;

/// <summary>
/// What TLS costs one transport at one size: its plaintext row and its TLS row of a Tls=false+true plan. The two passes run one
/// after the other, so besides the ratio of the means each pass's runs are set against that pass's own reference run nearest in
/// time and those paired ratios compared: the machine's drift between the passes cancels out of that one.
/// </summary>
public sealed record TlsCost(TransportSummary Plain, TransportSummary Tls)
{
    public string Transport => Plain.Transport;
    public int Records => Plain.Records;

    /// <summary>The TLS mean over the plaintext mean.</summary>
    public double Ratio => Tls.Seconds.Mean / Plain.Seconds.Mean;

    /// <summary>The TLS pass's paired ratio to its reference over the plaintext pass's; null without the reference in both.</summary>
    public double? PairedRatio => Plain.PairedRatioToPipelined is { Mean: > 0 } plain && Tls.PairedRatioToPipelined is { } tls ? tls.Mean / plain.Mean : null;

    /// <summary>The paired ratio's 95 % half-interval (Welch on the two passes' paired ratios, over the plaintext one); null with one run a pass.</summary>
    public double? PairedRatioCi95 => Plain.PairedRatioToPipelined is { Mean: > 0, HasInterval: true } plain && Tls.PairedRatioToPipelined is { HasInterval: true } tls
        ? Welch.DifferenceCi95(plain, tls) / plain.Mean : null;

    /// <summary>What TLS adds a record, in µs: for the one-call-per-record designs, the cost of a call's TLS.</summary>
    public double MicrosPerRecord => (Tls.Seconds.Mean - Plain.Seconds.Mean) / Records * 1e6;

    /// <summary>
    /// Connecting and handshakes before the first request, mean ms a run, each pass: the TLS handshake's own time shows as the
    /// difference (an HTTP client connects inside its first request, so its setup is near none either way); null where not measured.
    /// </summary>
    public (double Plain, double Tls)? SetupMs => Plain.Costs is { } plain && Tls.Costs is { } tls ? (plain.SetupSeconds * 1000, tls.SetupSeconds * 1000) : null;

    /// <summary>The client's and the server's CPU per MB the transport carried (its plaintext bytes on the wire), each pass; null where not measured.</summary>
    public (double Plain, double Tls)? ClientCpuMsPerMB => PerMB(Plain.Costs?.ClientCpuMsPer1000, Tls.Costs?.ClientCpuMsPer1000);
    public (double Plain, double Tls)? ServerCpuMsPerMB => PerMB(Plain.Costs?.ServerCpuMsPer1000, Tls.Costs?.ServerCpuMsPer1000);

    private (double, double)? PerMB(double? plainPer1000, double? tlsPer1000) =>
        plainPer1000 is { } plain && tlsPer1000 is { } tls && Plain.MeanBytesPerRecord is > 0 and var bytes
            ? (plain * 1000 / bytes, tls * 1000 / bytes) : null;

    /// <summary>Every transport with both a plaintext and a TLS row among <paramref name="rows"/> (one size), the costliest first.</summary>
    public static List<TlsCost> Of(IEnumerable<TransportSummary> rows)
    {
        var list = rows.ToList();
        return [.. list.Where(t => t.Key.Tls && t.Key.Kind == RunKind.Transport)
            .Select(t => (Tls: t, Plain: list.FirstOrDefault(p => p.Key == t.Key with { Tls = false })))
            .Where(p => p.Plain is not null).Select(p => new TlsCost(p.Plain!, p.Tls))
            .OrderByDescending(c => c.PairedRatio ?? c.Ratio)];
    }
}
