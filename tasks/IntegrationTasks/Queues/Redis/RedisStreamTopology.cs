using System.Globalization;
using StackExchange.Redis;

namespace IntegrationTasks.Queues.Redis;

/// <summary>
/// Redis Streams as a request/reply queue: requests appended to one stream read by the servers' consumer group; each client's
/// replies appended to a stream of its own, read by that client's group. An entry is acknowledged (XACK) only after what it asked
/// for is done: a server's reply is appended and its request acknowledged in one MULTI/EXEC, a client acknowledges after its import
/// committed. Entries a dead consumer read and never acknowledged are claimed (XAUTOCLAIM) by the next one to start.
/// </summary>
internal static class RedisStreamTopology
{
    public const string RequestStream = "integrationtasks:requests";
    public const string ServerGroup = "servers";
    public const string ClientGroup = "client";
    public const string BatchField = "batch";

    /// <summary>The request's id: the client's run, the client and the batch; its reply carries it back.</summary>
    public const string RequestIdField = "request";
    public const string ReplyToField = "reply-to";
    public const string BodyField = "body";

    /// <summary>A reply that refuses its request: the server's coded error ("IT2001: …") instead of a body.</summary>
    public const string ErrorField = "error";

    /// <summary>How long an entry a consumer read may stay unacknowledged before another takes it (a killed server's entries).</summary>
    public static readonly TimeSpan ClaimIdle = TimeSpan.FromSeconds(10);

    /// <summary>
    /// A client's reply stream, by its run and its number: clients of two machines (ClientMachines) run at once with the same numbers,
    /// and each must read its own replies only.
    /// </summary>
    public static string ReplyStream(string runId, int client) => $"{ReplyStreamPrefix}{runId}:{client.ToString(CultureInfo.InvariantCulture)}";

    /// <summary>What every reply stream's name starts with.</summary>
    public const string ReplyStreamPrefix = "integrationtasks:replies:";

    /// <summary>Makes the stream and its group if either is missing (BUSYGROUP: it was there).</summary>
    public static async Task EnsureGroupAsync(IDatabase db, string stream, string group)
    {
        try
        {
            await db.StreamCreateConsumerGroupAsync(stream, group, StreamPosition.Beginning, createStream: true).ConfigureAwait(false);
        }
        catch (RedisServerException e) when (e.Message.StartsWith("BUSYGROUP", StringComparison.Ordinal))
        {
        }
    }

    /// <summary>
    /// XREADGROUP … BLOCK: waits on the server for new entries, up to <paramref name="block"/>. StackExchange.Redis has no
    /// blocking reads on its shared multiplexer (a blocked connection would hold up every other command on it), so this is sent
    /// on a connection of the reader's own, whose timeout is set above the block.
    /// </summary>
    public static async Task<StreamEntry[]> ReadGroupBlockingAsync(IDatabase dedicated, string stream, string group, string consumer, int count, TimeSpan block)
    {
        var result = await dedicated.ExecuteAsync("XREADGROUP", "GROUP", group, consumer, "COUNT", count,
            "BLOCK", (long)block.TotalMilliseconds, "STREAMS", stream, ">").ConfigureAwait(false);
        return Entries(result);
    }

    /// <summary>Entries another consumer read and left unacknowledged for <paramref name="minIdle"/> or longer (XAUTOCLAIM), now this one's.</summary>
    public static async Task<StreamEntry[]> ClaimAsync(IDatabase db, string stream, string group, string consumer, TimeSpan minIdle, int count)
    {
        var claimed = new List<StreamEntry>();
        RedisValue start = "0-0";
        do
        {
            // A bounded COUNT a call: Redis sizes its reply by it.
            var result = await db.StreamAutoClaimAsync(stream, group, consumer, (long)minIdle.TotalMilliseconds, start, Math.Min(count - claimed.Count, 100))
                .ConfigureAwait(false);
            claimed.AddRange(result.ClaimedEntries.Where(e => !e.IsNull));
            start = result.NextStartId;
        }
        while (start != "0-0" && claimed.Count < count);
        return [.. claimed];
    }

    /// <summary>The field's value of an entry, or null.</summary>
    public static RedisValue Field(StreamEntry entry, string name)
    {
        foreach (var value in entry.Values)
            if (value.Name == name)
                return value.Value;
        return RedisValue.Null;
    }

    /// <summary>
    /// The entries of an XREADGROUP reply for one stream, or none: in RESP2 an array of [stream, entries] pairs, in RESP3 a map
    /// (stream → entries, which the library gives as [stream, entries]); each entry is [id, [field, value, …]].
    /// </summary>
    internal static StreamEntry[] Entries(RedisResult result)
    {
        if (result.IsNull)
            return [];
        var streams = (RedisResult[])result!;
        if (streams.Length == 0)
            return [];
        var entriesOfStream = streams[0].Resp2Type == ResultType.Array ? ((RedisResult[])streams[0]!)[1] : streams[1];
        if (entriesOfStream.IsNull)
            return [];
        var entries = (RedisResult[])entriesOfStream!;
        return [.. entries.Select(entry =>
        {
            var parts = (RedisResult[])entry!;
            var fields = (RedisResult[])parts[1]!;
            var values = new NameValueEntry[fields.Length / 2];
            for (var i = 0; i < values.Length; i++)
                values[i] = new NameValueEntry((RedisValue)fields[2 * i], (RedisValue)fields[2 * i + 1]);
            return new StreamEntry((RedisValue)parts[0], values);
        })];
    }
}
