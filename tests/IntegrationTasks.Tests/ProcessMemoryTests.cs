using IntegrationTasks.Hosting;

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
