namespace IntegrationTasks.Tests;

[TestClass]
[TestCategory("Unit")]
public sealed class ProcessMemoryTests
{
    [TestMethod]
    public void The_native_heap_is_trimmed_through_glibc_on_linux()
    {
        // Found by a RunAll at large rows: each client run started from what SQLite's freed copies left resident in glibc's arenas.
        Assert.AreEqual(OperatingSystem.IsLinux(), ProcessMemory.TrimNativeHeap());
    }
}

[TestClass]
[TestCategory("Unit")]
public sealed class ProcessMeterTests
{
    [TestMethod]
    public async Task A_meter_reads_what_another_process_wrote_to_storage_and_its_cpu_between_start_and_stop()
    {
        using var folder = new TempDirectory("it-meter-");
        var file = Path.Combine(folder, "written");
        // The child's dd writes 32 MiB of random bytes, fsync'd, once told to, and is gone (reaped by the shell) before the stop: the
        // meter's start comes before the writes, its stop after; making the bytes costs the CPU it must count.
        var start = new System.Diagnostics.ProcessStartInfo("/bin/sh", ["-c", $"read go; dd if=/dev/urandom of='{file}' bs=1M count=32 conv=fsync 2>/dev/null; echo written; read done"])
        {
            RedirectStandardInput = true, RedirectStandardOutput = true,
        };
        using var child = System.Diagnostics.Process.Start(start)!;
        try
        {
            var meter = ProcessMeter.Start(child.Id)!;
            await child.StandardInput.WriteLineAsync("go");
            await child.StandardInput.FlushAsync();
            using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(30));
            Assert.AreEqual("written", await child.StandardOutput.ReadLineAsync(timeout.Token));
            var use = meter.Stop();

            Assert.IsGreaterThanOrEqualTo(32L * 1024 * 1024, use.StorageWriteBytes!.Value);
            Assert.IsLessThan(64L * 1024 * 1024, use.StorageWriteBytes.Value);
            Assert.IsGreaterThan(0.0, use.CpuSeconds!.Value, "the reaped dd's CPU, in its parent's cutime and cstime");
            Assert.IsGreaterThan(0L, use.PeakBytes!.Value);
        }
        finally
        {
            child.Kill(entireProcessTree: true);
            await child.WaitForExitAsync();
        }
    }

    [TestMethod]
    public void No_process_is_no_meter_and_a_process_gone_by_the_stop_reads_as_unknown()
    {
        Assert.IsNull(ProcessMeter.Start(0));
        using var child = System.Diagnostics.Process.Start("/bin/sh", ["-c", "exit 0"]);
        var meter = ProcessMeter.Start(child.Id);
        child.WaitForExit(); // and reaped: its /proc entry is gone
        Assert.AreEqual(new ProcessUse(null, null, null), meter!.Stop());
    }
}
