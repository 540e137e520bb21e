using System.Text.RegularExpressions;
using System.Threading.Channels;

namespace IntegrationTasks.Files;

/// <summary>
/// The file transports' conventions, shared by client and server. A file becomes visible under its
/// final name only when complete (written as *.tmp, then renamed in the same directory). Names are
/// made by the client from a fresh id and never read from file contents:
///   &lt;id&gt;.extract.xml   (simple extraction: first ID and count)
///   &lt;id&gt;.request.xml   (request/response: the list of IDs)
///   &lt;id&gt;.response.xml  (the server's answer, in the client's inbox)
///   &lt;id&gt;.error.txt     (a coded error instead of an answer)
/// </summary>
public static partial class FileExchange
{
    public const string ExtractSuffix = ".extract.xml";
    public const string RequestSuffix = ".request.xml";
    public const string ResponseSuffix = ".response.xml";
    public const string ErrorSuffix = ".error.txt";
    private const string TemporarySuffix = ".tmp";

    [GeneratedRegex(@"^(?<id>[A-Za-z0-9-]{1,64})(?<kind>\.extract\.xml|\.request\.xml)$")]
    private static partial Regex RequestName();

    /// <summary>A file the server keeps in its inbox while it serves: "host pid". Clients look for it before leaving a request.</summary>
    public const string ServerMarker = ".server";

    public static string NewId() => Guid.NewGuid().ToString("N");

    public static void WriteServerMarker(string inbox)
    {
        // Whole or not at all, as every file here: a client woken by its creation reads it complete.
        var path = Path.Combine(inbox, ServerMarker);
        File.WriteAllText(path + TemporarySuffix, $"{Environment.MachineName} {Environment.ProcessId}");
        File.Move(path + TemporarySuffix, path, overwrite: true);
    }

    public static void RemoveServerMarker(string inbox)
    {
        var path = Path.Combine(inbox, ServerMarker);
        // Only our own: a second server on the same inbox keeps its marker.
        if (File.Exists(path) && File.ReadAllText(path) == $"{Environment.MachineName} {Environment.ProcessId}")
            File.Delete(path);
    }

    /// <summary>
    /// A server serves this inbox: its marker is there and, when it names this machine, its process is alive (a marker left by a
    /// killed server does not count). A server on another machine (a shared mount) is taken at its marker's word.
    /// </summary>
    public static bool ServerIsServing(string inbox)
    {
        var path = Path.Combine(inbox, ServerMarker);
        string text;
        try
        {
            text = File.ReadAllText(path);
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            return false;
        }
        return text.Split(' ') is [var host, var pid]
               && (host != Environment.MachineName
                   || (int.TryParse(pid, System.Globalization.CultureInfo.InvariantCulture, out var id) && Directory.Exists($"/proc/{id}")));
    }

    /// <summary>The id and kind of a request file name, or null for anything else (temporary files included).</summary>
    public static (string Id, string Suffix)? ParseRequestName(string fileName)
    {
        var match = RequestName().Match(fileName);
        return match.Success ? (match.Groups["id"].Value, match.Groups["kind"].Value) : null;
    }

    /// <summary>Writes a file under a temporary name, then renames it, so a watcher never sees it half-written.</summary>
    public static async Task<long> PublishAsync(string directory, string fileName, Func<Stream, Task> write, CancellationToken cancellationToken)
    {
        var final = Path.Combine(directory, fileName);
        var temporary = final + TemporarySuffix;
        try
        {
            await using (var stream = new FileStream(temporary, FileMode.Create, FileAccess.Write, FileShare.None, 64 * 1024, useAsync: true))
            {
                await write(stream).ConfigureAwait(false);
                await stream.FlushAsync(cancellationToken).ConfigureAwait(false);
            }
            var size = new FileInfo(temporary).Length;
            File.Move(temporary, final, overwrite: true);
            return size;
        }
        catch
        {
            File.Delete(temporary);
            throw;
        }
    }

    public static FileStream OpenRead(string path) =>
        new(path, FileMode.Open, FileAccess.Read, FileShare.Read | FileShare.Delete, 64 * 1024, useAsync: true);

    public static void EnsureDirectory(string directory, string parameter)
    {
        if (string.IsNullOrWhiteSpace(directory))
            throw new IntegrationException(ErrorCodes.InvalidParameter, $"{parameter} is empty.");
        try
        {
            Common.OwnerOnlyFiles.CreateDirectoryIfMissing(directory); // the records travel through it: made its owner's alone
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            throw new IntegrationException(ErrorCodes.InvalidParameter, $"{parameter} '{directory}' cannot be created: {e.Message}", e);
        }
    }
}

/// <summary>
/// Wakes a loop when a directory changes, without polling: inotify events (through
/// FileSystemWatcher) become a coalesced signal, and the loop then looks at the directory itself —
/// so a burst of events is one wake-up, and an event lost to a watcher overflow costs nothing.
/// </summary>
public sealed class DirectorySignal : IDisposable
{
    private readonly FileSystemWatcher _watcher;
    private readonly Channel<bool> _signal = Channel.CreateBounded<bool>(new BoundedChannelOptions(1) { FullMode = BoundedChannelFullMode.DropWrite });

    public DirectorySignal(string directory)
    {
        _watcher = new FileSystemWatcher(directory) { NotifyFilter = NotifyFilters.FileName, IncludeSubdirectories = false };
        _watcher.Created += (_, _) => Raise();
        _watcher.Renamed += (_, _) => Raise();
        _watcher.Error += (_, _) => Raise();
        _watcher.EnableRaisingEvents = true;
    }

    private void Raise() => _signal.Writer.TryWrite(true);

    /// <summary>Waits for the next change (or one that happened since the last wait).</summary>
    public ValueTask<bool> WaitAsync(CancellationToken cancellationToken) => _signal.Reader.ReadAsync(cancellationToken);

    public void Dispose() => _watcher.Dispose();
}
