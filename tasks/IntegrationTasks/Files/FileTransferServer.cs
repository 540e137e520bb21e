using System.Data.Common;
using IntegrationTasks.Data;
using IntegrationTasks.Transfer;
using IntegrationTasks.Wire;

namespace IntegrationTasks.Files;

/// <summary>
/// The series' FileTransferTestServer: answers request files that appear in its inbox by writing
/// response files into the client's inbox. An extraction is one range query streamed to a file (the
/// series' "extração simples"); a request file is answered in the source's ServerWork (one lookup per ID by default). A request that
/// cannot be answered is moved to inbox/rejected with a coded warning, the client gets a coded
/// error file, and the server goes on.
/// </summary>
public sealed class FileTransferServer(RecordSource source, string inbox, string outbox, IEventLog log) : IDisposable
{
    private DirectorySignal? _signal;
    private long _answered;
    private long _rejected;

    public long Answered => Interlocked.Read(ref _answered);
    public long Rejected => Interlocked.Read(ref _rejected);

    /// <summary>
    /// Requests waiting in the inbox at once that the server takes on (it answers them in turn); the newer ones beyond are each
    /// answered at once with an error file carrying IT3008, so that their clients do not wait their whole timeout.
    /// </summary>
    public int MaxPendingRequests { get; init; } = 100;

    private int _handling;

    /// <summary>Request files in the inbox now, but for the one being answered (null when the inbox cannot be read).</summary>
    public long? RequestsWaiting
    {
        get
        {
            try
            {
                var files = Directory.EnumerateFiles(inbox).Count(f => FileExchange.ParseRequestName(Path.GetFileName(f)) is not null);
                return Math.Max(0, files - Volatile.Read(ref _handling));
            }
            catch (Exception e) when (e is IOException or UnauthorizedAccessException)
            {
                return null;
            }
        }
    }

    public void Start()
    {
        FileExchange.EnsureDirectory(inbox, "InputDir");
        FileExchange.EnsureDirectory(outbox, "OutputDir");
        _signal = new DirectorySignal(inbox);
        FileExchange.WriteServerMarker(inbox);
    }

    /// <summary>Answers what is in the inbox, then whatever arrives, until cancelled.</summary>
    public async Task RunAsync(CancellationToken cancellationToken)
    {
        var signal = _signal ?? throw new InvalidOperationException("Start the server first.");
        try
        {
            while (true)
            {
                var pending = PendingRequests();
                foreach (var request in pending.Skip(MaxPendingRequests))
                {
                    var (id, _) = FileExchange.ParseRequestName(request.Name)!.Value;
                    await RejectAsync(request, id, ErrorCodes.ServerBusy,
                        $"{MaxPendingRequests} requests are waiting, the most this server takes at once (MaxPendingRequests); try again later.", cancellationToken)
                        .ConfigureAwait(false);
                }
                foreach (var request in pending.Take(MaxPendingRequests))
                {
                    Volatile.Write(ref _handling, 1);
                    try
                    {
                        await HandleAsync(request, cancellationToken).ConfigureAwait(false);
                    }
                    finally
                    {
                        Volatile.Write(ref _handling, 0);
                    }
                }
                await signal.WaitAsync(cancellationToken).ConfigureAwait(false);
            }
        }
        catch (OperationCanceledException) when (cancellationToken.IsCancellationRequested)
        {
        }
    }

    private IEnumerable<FileInfo> PendingRequests() =>
        new DirectoryInfo(inbox).EnumerateFiles()
            .Where(f => FileExchange.ParseRequestName(f.Name) is not null)
            .OrderBy(f => f.LastWriteTimeUtc)
            .ToList();

    private async Task HandleAsync(FileInfo request, CancellationToken cancellationToken)
    {
        var (id, kind) = FileExchange.ParseRequestName(request.Name)!.Value;
        try
        {
            var written = kind == FileExchange.ExtractSuffix
                ? await ExtractAsync(request, id, cancellationToken).ConfigureAwait(false)
                : await AnswerAsync(request, id, cancellationToken).ConfigureAwait(false);
            request.Delete();
            Interlocked.Increment(ref _answered);
            log.Info($"Answered {request.Name}: {written:N0} bytes to {id}{FileExchange.ResponseSuffix}.");
        }
        catch (IntegrationException e)
        {
            await RejectAsync(request, id, e.Code, e.Message, cancellationToken).ConfigureAwait(false);
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException or DbException)
        {
            await RejectAsync(request, id, ErrorCodes.TransferFailed, e.Message, cancellationToken).ConfigureAwait(false);
        }
    }

    private async Task<long> ExtractAsync(FileInfo request, string id, CancellationToken cancellationToken)
    {
        int first, count;
        await using (var input = FileExchange.OpenRead(request.FullName))
            (first, count) = ExtractRequest.Read(input);
        return await FileExchange.PublishAsync(outbox, id + FileExchange.ResponseSuffix, async output =>
        {
            using var writer = new RecordXml.ResponseWriter(output);
            await foreach (var record in RecordReader.ReadOrderedAsync(source.Database, RecordTable.Service, first, first + count - 1, cancellationToken)
                               .ConfigureAwait(false))
                writer.Write(record);
        }, cancellationToken).ConfigureAwait(false);
    }

    private async Task<long> AnswerAsync(FileInfo request, string id, CancellationToken cancellationToken)
    {
        await using var lookup = await source.OpenLookupAsync(cancellationToken).ConfigureAwait(false);
        await using var input = FileExchange.OpenRead(request.FullName);
        return await FileExchange.PublishAsync(outbox, id + FileExchange.ResponseSuffix,
            output => RecordService.AnswerAsync(lookup, input, output, cancellationToken), cancellationToken).ConfigureAwait(false);
    }

    private async Task RejectAsync(FileInfo request, string id, string code, string message, CancellationToken cancellationToken)
    {
        Interlocked.Increment(ref _rejected);
        var rejected = Path.Combine(inbox, "rejected");
        Directory.CreateDirectory(rejected);
        try
        {
            request.MoveTo(Path.Combine(rejected, request.Name), overwrite: true);
        }
        catch (IOException)
        {
        }
        log.Warning(code, $"Rejected {request.Name} (moved to {rejected}): {message}");
        await FileExchange.PublishAsync(outbox, id + FileExchange.ErrorSuffix, async output =>
        {
            await using var writer = new StreamWriter(output, leaveOpen: true);
            await writer.WriteAsync(CodedError.Format(code, message)).ConfigureAwait(false);
        }, cancellationToken).ConfigureAwait(false);
    }

    public void Dispose()
    {
        if (_signal is null)
            return;
        _signal.Dispose();
        FileExchange.RemoveServerMarker(inbox);
    }
}
