using System.Text;

namespace IntegrationTasks.Exporters;

/// <summary>
/// The explorer's section of report.html: its controls, the runs' data as JSON, uPlot (inlined with its licence) and the explorer's
/// script — all in the page, which asks nothing of the network. The static tables below stay for printing and for readers without scripts.
/// </summary>
public static class ExplorerHtml
{
    private static string Resource(string name)
    {
        using var stream = typeof(ExplorerHtml).Assembly.GetManifestResourceStream(name)
            ?? throw new InvalidOperationException($"The report's resource {name} is not in the assembly.");
        using var reader = new StreamReader(stream, Encoding.UTF8);
        return reader.ReadToEnd();
    }

    private static readonly Lazy<string> Scripts = new(() =>
        $"<!-- uPlot 1.6.32, https://github.com/leeoniya/uPlot\n{Resource("Explorer.uPlot.LICENSE").Replace("--", "–", StringComparison.Ordinal)}-->\n"
        + $"<style>{Resource("Explorer.uPlot.css")}</style>\n<script>{Resource("Explorer.uPlot.js")}</script>\n");

    private static readonly Lazy<string> Explorer = new(() => Resource("Explorer.explorer.js"));

    public static string Section(string json) => new StringBuilder()
        .Append("""
            <section id="explorer"><h2>Explorer</h2>
            <p class="note">Every run of this report (and of the RunAlls before it in the results database): filter by any field of the runs' key
            (none chosen: all), sort by any column, chart any measure, and compare two values of one field.</p>
            <noscript><p class="note">The explorer needs scripts; the tables below hold the same figures.</p></noscript>
            <div id="explorer-filters" class="filters"></div>
            <p><label>Chart <select id="explorer-metric"></select></label>
            <label>Scale <select id="explorer-scale"><option value="linear">linear</option><option value="log">log</option></select></label>
            <label>View <select id="explorer-view"><option value="bars">rows</option><option value="history">across RunAlls</option></select></label>
            <span id="explorer-count" class="note"></span></p>
            <div id="explorer-chart"></div><p id="explorer-chart-note" class="note"></p>
            <div class="wide"><table id="explorer-table"></table></div>
            <h3>Compare two values of one field</h3>
            <p><label>Field <select id="compare-field"></select></label> <label>A <select id="compare-a"></select></label>
            <label>B <select id="compare-b"></select></label> <span id="compare-note" class="note"></span></p>
            <p class="note">B against A on the mean time of the rows measured at both with everything else the same: the change, Welch's 95 % interval, and
            "slower" or "faster" only when the interval leaves out zero.</p>
            <div class="wide"><table id="compare-table"></table></div>
            <style>#explorer .filters{display:flex;flex-wrap:wrap;gap:.5em 1em;font-size:12px}#explorer select{font-size:12px;max-width:14em}
            #explorer th{cursor:pointer}#explorer label{margin-right:1em}</style>
            """)
        .Append("<script type=\"application/json\" id=\"explorer-data\">").Append(json).Append("</script>\n")
        .Append(Scripts.Value)
        .Append("<script>").Append(Explorer.Value).Append("</script></section>\n")
        .ToString();
}
