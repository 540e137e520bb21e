using IntegrationTasks.Data;
using IntegrationTasks.Wire;

namespace IntegrationTasks.Transfer;

/// <summary>The server side of every XML transport: a request's IDs in, their records out, read in the lookup's <see cref="ServerWork"/>.</summary>
public static class RecordService
{
    /// <summary>Reads a request message and writes the response message; returns the records written.</summary>
    public static async Task<int> AnswerAsync(RecordLookup lookup, Stream request, Stream response, CancellationToken cancellationToken,
        int maxBatchRecords = int.MaxValue) =>
        await AnswerAsync(lookup, await RecordXml.ReadRequestAsync(request, maxBatchRecords, cancellationToken).ConfigureAwait(false), response,
            afterRecord: null, cancellationToken).ConfigureAwait(false);

    /// <summary>
    /// Writes the response for these IDs; <paramref name="afterRecord"/> runs after each record
    /// (a streaming server sends what is buffered there).
    /// </summary>
    public static async Task<int> AnswerAsync(RecordLookup lookup, IReadOnlyList<int> ids, Stream response,
        Func<ValueTask>? afterRecord, CancellationToken cancellationToken)
    {
        var written = 0;
        using var writer = new RecordXml.ResponseWriter(response);
        // An unknown ID is left out; verification on the client reports it as missing.
        await foreach (var record in lookup.ReadAsync(ids, cancellationToken).ConfigureAwait(false))
        {
            writer.Write(record);
            written++;
            if (afterRecord is not null)
            {
                writer.Flush();
                await afterRecord().ConfigureAwait(false);
            }
        }
        return written;
    }
}
