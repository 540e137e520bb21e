namespace IntegrationTasks.Tests;

/// <summary>
/// The pipelined clients' reader of a response as it arrives: the rows XmlReader reads from the whole message, in any chunking,
/// without holding a large payload's frame whole; every other form, and every broken one, read or refused as XmlReader does.
/// </summary>
[TestClass]
[TestCategory("Unit")]
public sealed class StreamedResponseXmlTests
{
    private const int MiB = 1024 * 1024;

    private static ServiceRecord Row(int id, byte[]? payload = null, string? text = null) =>
        new(id, $"row {id} <&> ✓", id * 1.25, new DateTime(2014, 5, 10, 13, 45, 0).AddTicks(id), id % 2 == 0 ? null : "a", "", payload, text);

    private static byte[] Bytes(int size, int seed)
    {
        var bytes = new byte[size];
        new Random(seed).NextBytes(bytes);
        return bytes;
    }

    private static byte[] Message(IEnumerable<ServiceRecord> rows)
    {
        using var buffer = new MemoryStream();
        RecordXml.WriteResponse(buffer, rows);
        return buffer.ToArray();
    }

    private static List<ServiceRecord> Rows(string shape) => shape switch
    {
        "none" => [.. Enumerable.Range(1, 300).Select(i => Row(i))],
        "empty" => [],
        "bytes-64KiB" => [.. Enumerable.Range(1, 5).Select(i => Row(i, Bytes(64 * 1024 + i, i)))],
        "bytes-1MiB" => [Row(1, Bytes(MiB, 1)), Row(2, Bytes(10, 2)), Row(3, Bytes(MiB + 1, 3)), Row(4, Bytes(MiB + 2, 4)), Row(5, [])],
        "bytes-3MiB" => [Row(1, Bytes(3 * MiB, 5))],
        "text-64KiB" => [.. Enumerable.Range(1, 3).Select(i => Row(i, text: new string('é', 32 * 1024) + "\r\n<&>"))],
        _ => throw new ArgumentOutOfRangeException(nameof(shape)),
    };

    [TestMethod]
    [DataRow("none", 7)]
    [DataRow("none", 100_000)]
    [DataRow("empty", 3)]
    [DataRow("bytes-64KiB", 5_000)]
    [DataRow("bytes-1MiB", 1)]
    [DataRow("bytes-1MiB", 65_536)]
    [DataRow("bytes-1MiB", 300_001)]
    [DataRow("bytes-3MiB", 70_000)]
    [DataRow("text-64KiB", 999)]
    public async Task What_the_writer_writes_reads_to_the_same_rows_in_any_chunking(string shape, int largestChunk)
    {
        var rows = Rows(shape);
        var message = Message(rows);
        var (read, window, fellBack) = await StreamedResponseXml.ReadMeasuredAsync(new TrickleStream(message, largestChunk, seed: largestChunk), CancellationToken.None);
        RowChecks.AssertSameRows(rows, read, "streamed");
        // All of it read in place, a payload of any size decoded as it comes: the window stays within the pooled sizes.
        Assert.IsFalse(fellBack);
        Assert.IsLessThanOrEqualTo(MiB, window, $"window for a {message.Length}-byte message");
    }

    private static byte[] OtherForm(string form)
    {
        var large = Encoding.UTF8.GetString(Message([Row(1, Bytes(2 * MiB, 9)), Row(2)]));
        var breakAt = large.IndexOf("<Payload>", StringComparison.Ordinal) + 1_500_000;
        var small = Encoding.UTF8.GetString(Message([Row(1), Row(2), Row(3)]));
        return Encoding.UTF8.GetBytes(form switch
        {
            "a line break in a large payload" => large.Insert(breakAt, "\n"),
            "a comment after a large payload" => large.Replace("</Payload></record>", "</Payload><!-- c --></record>", StringComparison.Ordinal),
            "CDATA in a large payload" => large.Insert(breakAt, "]]>").Insert(breakAt - 4, "<![CDATA["),
            "whitespace after the table" => small + "\n  ",
            "whitespace between records" => small.Replace("</record><record>", "</record>\n<record>", StringComparison.Ordinal),
            "no declaration" => "<table>" + small.Split("<table>")[1],
            _ => throw new ArgumentOutOfRangeException(nameof(form)),
        });
    }

    [TestMethod]
    [DataRow("a line break in a large payload", true)]
    [DataRow("a comment after a large payload", true)]
    [DataRow("CDATA in a large payload", true)]
    [DataRow("whitespace after the table", true)]
    [DataRow("whitespace between records", true)]
    [DataRow("no declaration", false)]
    public async Task Another_well_formed_form_reads_to_the_rows_XmlReader_reads(string form, bool leftToXmlReader)
    {
        var message = OtherForm(form);
        var expected = RecordXml.ReadResponse(new MemoryStream(message));
        var (read, _, fellBack) = await StreamedResponseXml.ReadMeasuredAsync(new TrickleStream(message, 40_000, seed: 1), CancellationToken.None);
        RowChecks.AssertSameRows(expected, read, form);
        Assert.AreEqual(leftToXmlReader, fellBack, "left to XmlReader");
    }

    private static byte[] BrokenForm(string form)
    {
        var large = Encoding.UTF8.GetString(Message([Row(1, Bytes(2 * MiB, 9))]));
        return form switch
        {
            "cut short in a large payload" => Encoding.UTF8.GetBytes(large[..1_800_000]),
            "a large payload that is not base64" => Encoding.UTF8.GetBytes(large.Insert(large.IndexOf("</Payload>", StringComparison.Ordinal) - 8, "*")),
            "a large payload's padding inside it" => Encoding.UTF8.GetBytes(large.Insert(1_000_000, "====")),
            "a wrong end tag" => Encoding.UTF8.GetBytes(Encoding.UTF8.GetString(Message([Row(1)])).Replace("</table>", "</tabel>", StringComparison.Ordinal)),
            "an ID that is no number" => "<table><record><ServiceTableID>x</ServiceTableID></record></table>"u8.ToArray(),
            "a refusal" => RecordXml.Refusal("IT3008", "too many clients"),
            _ => throw new ArgumentOutOfRangeException(nameof(form)),
        };
    }

    [TestMethod]
    [DataRow("cut short in a large payload", ErrorCodes.MalformedXml)]
    [DataRow("a large payload that is not base64", ErrorCodes.MalformedXml)]
    [DataRow("a large payload's padding inside it", ErrorCodes.MalformedXml)]
    [DataRow("a wrong end tag", ErrorCodes.MalformedXml)]
    [DataRow("an ID that is no number", ErrorCodes.InvalidFieldValue)]
    [DataRow("a refusal", "IT3008")]
    public async Task A_broken_message_is_refused_with_the_code_XmlReader_gives(string form, string code)
    {
        var message = BrokenForm(form);
        var whole = Assert.ThrowsExactly<IntegrationException>(() => RecordXml.ReadResponse(new MemoryStream(message)), form);
        Assert.AreEqual(code, whole.Code, form);
        var streamed = await Assert.ThrowsExactlyAsync<IntegrationException>(() =>
            StreamedResponseXml.ReadAsync(new TrickleStream(message, 50_000, seed: 2), CancellationToken.None), form);
        Assert.AreEqual(code, streamed.Code, form);
    }

    [TestMethod]
    public async Task A_stream_that_ends_before_its_length_is_a_truncated_frame()
    {
        var message = Message([Row(1, Bytes(2 * MiB, 3))]);
        var cut = new TrickleStream(message[..1_000_000], 64 * 1024, seed: 3, claimedLength: message.Length);
        var e = await Assert.ThrowsExactlyAsync<IntegrationException>(() => StreamedResponseXml.ReadAsync(cut, CancellationToken.None));
        Assert.AreEqual(ErrorCodes.TruncatedFrame, e.Code);
    }

    [TestMethod]
    public async Task An_error_the_connection_raises_mid_response_is_told_as_the_connection_said()
    {
        // A WebSocket closed with a coded reason mid-frame: its stream throws that error once, then reads as ended.
        var message = Message([Row(1, Bytes(100_000, 4))]);
        var frame = new byte[FrameFormat.Plain.HeaderSize + 5_000];
        FrameFormat.Plain.WriteHeader(frame, message.Length, batchId: 0);
        message.AsSpan(0, 5_000).CopyTo(frame.AsSpan(FrameFormat.Plain.HeaderSize));
        await using var frames = IntegrationTasks.Streams.FrameConnection.Create(IntegrationTasks.Streams.StreamIo.Streams,
            new ClosingStream(frame, new IntegrationException(ErrorCodes.ConnectionStalled, "closed by the server")), FrameFormat.Plain, 64 << 20);
        var e = await Assert.ThrowsExactlyAsync<IntegrationException>(() => frames.ParseAsync(StreamedResponseXml.ReadAsync, CancellationToken.None).AsTask());
        Assert.AreEqual(ErrorCodes.ConnectionStalled, e.Code);
    }

    /// <summary>Hands over its bytes, then throws <paramref name="error"/> once, then reads as ended.</summary>
    private sealed class ClosingStream(byte[] bytes, Exception error) : ReadOnlyTestStream
    {
        private bool _thrown;

        public override ValueTask<int> ReadAsync(Memory<byte> buffer, CancellationToken cancellationToken = default)
        {
            if (Position32 < bytes.Length)
            {
                var count = Math.Min(buffer.Length, bytes.Length - Position32);
                bytes.AsSpan(Position32, count).CopyTo(buffer.Span);
                Position32 += count;
                return new(count);
            }
            if (_thrown)
                return new(0);
            _thrown = true;
            return ValueTask.FromException<int>(error);
        }
    }

    /// <summary>A message handed over in chunks of 1 to <paramref name="largestChunk"/> bytes, as a socket might.</summary>
    private sealed class TrickleStream(byte[] message, int largestChunk, int seed, int? claimedLength = null) : ReadOnlyTestStream
    {
        private readonly Random _random = new(seed);

        public override ValueTask<int> ReadAsync(Memory<byte> buffer, CancellationToken cancellationToken = default)
        {
            var count = Math.Min(Math.Min(buffer.Length, message.Length - Position32), _random.Next(1, largestChunk + 1));
            message.AsSpan(Position32, count).CopyTo(buffer.Span);
            Position32 += count;
            return new(count);
        }

        // The reader takes the message's length from its stream, as from a frame's payload.
        public override long Length => claimedLength ?? message.Length;
    }
}
