namespace IntegrationTasks.Tests;

[TestClass]
[TestCategory("Unit")]
public sealed class BarChartTests
{
    [TestMethod]
    public void The_longest_transport_name_fits_left_of_its_bar()
    {
        // Seen in a real report: "NetTcpSmallBatchesAsyncSyncServer" was cut to "pSmallBatchesAsyncSyncServer" by a fixed 200 px column.
        var svg = IntegrationTasks.Exporters.HtmlReport.BarChart("t", "title",
            [new("NetTcpSmallBatchesAsyncSyncServer", 1.0), new("DirectCopy", 2.0, Baseline: true)], "F3");
        var x = double.Parse(System.Text.RegularExpressions.Regex.Match(svg, "<rect [^>]*x=\"([0-9.]+)\"").Groups[1].Value,
            System.Globalization.CultureInfo.InvariantCulture);
        Assert.IsGreaterThanOrEqualTo(7.0 * "NetTcpSmallBatchesAsyncSyncServer".Length, x, svg);
    }
}
