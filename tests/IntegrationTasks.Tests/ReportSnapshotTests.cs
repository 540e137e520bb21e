using IntegrationTasks.Common;
using IntegrationTasks.Results;
using IntegrationTasks.Transfer;

namespace IntegrationTasks.Tests;

/// <summary>
/// The report's wording, kept in one place: results.md for a fixed set of runs, compared with Snapshots/results.md. Other tests
/// assert values (cells, codes, numbers); a sentence reworded changes this snapshot only. After a deliberate change, refresh it:
///   UPDATE_SNAPSHOTS=1 dotnet test tests/IntegrationTasks.Tests --filter TestCategory=Snapshot
/// and read the diff before committing it.
/// </summary>
[TestClass]
[TestCategory("Unit")]
[TestCategory("Snapshot")]
public sealed class ReportSnapshotTests
{
    private static readonly DateTimeOffset Start = new(2026, 1, 1, 0, 0, 0, TimeSpan.Zero);

    private static Measurement Run(string transport, double seconds, int round, RunKind kind = RunKind.Transport, string work = "PerRecord",
        bool warmup = false, int position = 0) => new()
    {
        Transport = transport, Kind = kind, Records = 20_000, BatchSize = 1000, Repetition = warmup ? 0 : round, Warmup = warmup, ElapsedSeconds = seconds,
        ServerWork = work, Verified = true, RoundSeed = 7, ClientPeakBytes = 200L << 20, BytesSent = 100_000, BytesReceived = 2_000_000,
        ClientCpuSeconds = seconds * 0.8, ClientAllocatedBytes = 40_000_000, Timestamp = Start.AddSeconds(round * 60 + position * 5),
    };

    /// <summary>Three rounds of the references, two transports (one reading ranges), the peer; a warm-up each.</summary>
    private static List<Measurement> Runs()
    {
        (string Name, double Seconds, RunKind Kind, string Work)[] transports =
        [
            ("DirectCopy", 1.60, RunKind.Baseline, "PerRecord"), ("PipelinedCopy", 1.00, RunKind.Reference, "PerRecord"),
            ("PipelinedCopyRange", 0.80, RunKind.Reference, "Range"), ("TcpClient2", 1.40, RunKind.Transport, "PerRecord"),
            ("FileTransferRequest", 1.20, RunKind.Transport, "Range"), ("Peer: SQLite ATTACH", 0.30, RunKind.Peer, "PerRecord"),
        ];
        var runs = new List<Measurement>();
        for (var i = 0; i < transports.Length; i++)
        {
            var (name, seconds, kind, work) = transports[i];
            runs.Add(Run(name, seconds * 2, 0, kind, work, warmup: true, position: i));
            for (var round = 1; round <= 3; round++)
                runs.Add(Run(name, seconds * (1 + 0.02 * ((round + i) % 3)), round, kind, work, position: i));
        }
        return runs;
    }

    [TestMethod]
    public void The_report_s_wording_is_as_in_its_snapshot()
    {
        using var folder = new TempDirectory("it-snapshot-");
        ReportWriter.Write(folder, Runs(), new Dictionary<string, string> { ["CPU"] = "two cores" }, new ReportOptions
        {
            NotRun = [new NotRunEntry("MSMQ", "Windows only.", "", "836.12", "RabbitMQDurable")],
            Series = [new SeriesEntry("Tcp Client 2 (multi thread)", 355.43, "TcpClient2")],
            Failed = [new FailedEntry("GrpcClient", 20_000, "IT4001", "Port 8085 on 127.0.0.1 is already in use.")],
            Encodings = new Dictionary<string, string> { ["TcpClient2"] = "XML", ["FileTransferRequest"] = "XML file" },
            Noise = [.. new[] { "Before", "After" }.SelectMany(phase => new[]
            {
                NoiseReading.Of(phase, MachineNoise.Cpu, [10.0, 10.1, 9.9, 10.0]),
                NoiseReading.Of(phase, MachineNoise.DatabaseLoop, [20.0, 21.0, 19.0, 20.0]) with { Provider = "Sqlite" },
            })],
        });
        var actual = File.ReadAllText(Path.Combine(folder, "results.md"));
        var snapshot = Path.Combine(RepositoryPaths.Root, "tests", "IntegrationTasks.Tests", "Snapshots", "results.md");
        if (Environment.GetEnvironmentVariable("UPDATE_SNAPSHOTS") == "1")
            File.WriteAllText(snapshot, actual);
        Assert.IsTrue(File.Exists(snapshot), $"No snapshot at {snapshot}: make it with UPDATE_SNAPSHOTS=1.");
        Assert.AreEqual(File.ReadAllText(snapshot), actual, "Wording changed: UPDATE_SNAPSHOTS=1 refreshes it.");
    }
}
