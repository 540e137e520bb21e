namespace IntegrationTasks.Labs;

/// <summary>Runs the 2014 I/O articles' experiment in its three modes and records it beside the transports' results.</summary>
public sealed class IoLabTask : IntegrationTask
{
    [Required] public string Directory { get; set; } = "";
    [Required] public string ResultsDirectory { get; set; } = "";
    public int Iterations { get; set; } = 10;
    public int FileMegabytes { get; set; } = 100;
    public int SortItems { get; set; } = 10_000;

    protected override async Task ExecuteAsync(CancellationToken cancellationToken)
    {
        if (Iterations < 1 || FileMegabytes < 1 || SortItems < 2)
            throw new IntegrationException(ErrorCodes.InvalidParameter, "Iterations and FileMegabytes must be at least 1, SortItems at least 2.");
        var options = new IoLabOptions
        {
            Directory = Path.GetFullPath(Directory), Iterations = Iterations, FileBytes = FileMegabytes * 1024L * 1024, SortItems = SortItems,
        };
        var lab = new IoLab(options);
        var results = new List<IoLabResult>();
        foreach (var mode in Enum.GetValues<IoMode>())
        {
            Log.LogMessage(MessageImportance.High, "IoLab {0}: {1} × ({2} MB written and flushed + bubble sort of {3:N0} items)…",
                mode, Iterations, FileMegabytes, SortItems);
            var result = await lab.RunAsync(mode, cancellationToken).ConfigureAwait(false);
            if (!result.Sorted || result.BytesWritten != options.FileBytes)
                throw new IntegrationException(ErrorCodes.LabFailed, $"IoLab {mode} did not write the whole file or did not sort.");
            Log.LogMessage(MessageImportance.High, "IoLab {0}: {1:N0} ms in all, {2:N0} ms per iteration (article: {3:N0} ms).",
                mode, result.TotalMilliseconds, result.IterationMilliseconds.Average(), result.ArticleMilliseconds);
            results.Add(result);
        }
        IoLabReport.Save(ResultsDirectory, new IoLabReport.Run(options, results, DateTimeOffset.UtcNow));
    }
}
