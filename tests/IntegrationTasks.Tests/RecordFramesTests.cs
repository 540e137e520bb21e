namespace IntegrationTasks.Tests;

/// <summary>The seam's framing: every value back exactly, and each kind of bad frame refused with its code before it costs memory.</summary>
[TestClass]
[TestCategory("Unit")]
public sealed class RecordFramesTests
{
    private static readonly RequestedBatch Batch = new(3, 3001, 4);

    private static IReadOnlyList<ServiceRecord> Awkward() =>
    [
        new(3001, "", -0.0, new DateTime(2014, 3, 9, 23, 59, 59, DateTimeKind.Utc).AddTicks(1), null, ""),
        new(3002, "é ☃ \u0000 <&>", double.NaN, DateTime.MinValue, "", null, Payload: [0, 255, 1]),
        new(3003, "x", double.MaxValue, DateTime.MaxValue, "a", "b", Payload: []),
        new(3004, "y", double.Epsilon, new DateTime(2026, 11, 29, 4, 0, 0, DateTimeKind.Local), null, null, PayloadText: "\"quoted\" ‰"),
    ];

    [TestMethod]
    public async Task Records_come_back_with_every_value_exact_and_the_frame_size_written()
    {
        using var stream = new MemoryStream();
        var written = await RecordFrames.WriteRecordsAsync(stream, Batch, Awkward(), CancellationToken.None);
        stream.Position = 0;

        var reply = await RecordFrames.ReadRecordsAsync(stream, 1 << 20, CancellationToken.None);

        Assert.IsNotNull(reply);
        Assert.AreEqual((3, (int)stream.Length, written), (reply.BatchIndex, reply.FrameBytes, reply.FrameBytes));
        Assert.HasCount(4, reply.Records);
        foreach (var (sent, received) in Awkward().Zip(reply.Records))
        {
            Assert.IsTrue(sent.SameValuesAs(received), $"record {sent.Id}");
            Assert.AreEqual(sent.CreationDate.Kind, received.CreationDate.Kind);
        }
        Assert.IsNull(await RecordFrames.ReadRecordsAsync(stream, 1 << 20, CancellationToken.None), "the end of the stream between frames");
    }

    [TestMethod]
    public async Task A_request_comes_back_and_takes_the_bytes_it_says()
    {
        using var stream = new MemoryStream();
        await RecordFrames.WriteRequestAsync(stream, Batch, CancellationToken.None);
        stream.Position = 0;

        Assert.AreEqual(RecordFrames.RequestFrameBytes, (int)stream.Length);
        Assert.AreEqual(Batch, await RecordFrames.ReadRequestAsync(stream, CancellationToken.None));
        Assert.IsNull(await RecordFrames.ReadRequestAsync(stream, CancellationToken.None));
    }

    [TestMethod]
    public async Task A_reply_larger_than_allowed_is_refused_from_its_length_alone()
    {
        using var stream = new MemoryStream();
        await RecordFrames.WriteRecordsAsync(stream, Batch, Awkward(), CancellationToken.None);
        stream.Position = 0;

        var e = await Assert.ThrowsExactlyAsync<TransportException>(async () => await RecordFrames.ReadRecordsAsync(stream, 64, CancellationToken.None));

        Assert.AreEqual((TransportError.FrameTooLarge, "IT2101", 4L), (e.Error, e.Code, stream.Position));
    }

    [TestMethod]
    [DataRow(0, TransportError.ConnectionLost)]
    [DataRow(2, TransportError.ConnectionLost)]
    [DataRow(30, TransportError.ConnectionLost)]
    public async Task A_stream_that_ends_inside_a_frame_is_a_lost_connection(int keep, TransportError expected)
    {
        using var whole = new MemoryStream();
        await RecordFrames.WriteRecordsAsync(whole, Batch, Awkward(), CancellationToken.None);
        using var cut = new MemoryStream(whole.ToArray()[..Math.Max(1, keep)]);

        var e = await Assert.ThrowsExactlyAsync<TransportException>(async () => await RecordFrames.ReadRecordsAsync(cut, 1 << 20, CancellationToken.None));

        Assert.AreEqual((expected, "IT3006"), (e.Error, e.Code));
    }

    [TestMethod]
    public async Task A_request_for_no_batch_and_a_reply_with_a_bad_tag_are_malformed()
    {
        using var request = new MemoryStream();
        await RecordFrames.WriteRequestAsync(request, new RequestedBatch(0, 0, 5), CancellationToken.None);
        request.Position = 0;
        using var reply = new MemoryStream();
        await RecordFrames.WriteRequestAsync(reply, Batch, CancellationToken.None);
        reply.Position = 0;

        var badRequest = await Assert.ThrowsExactlyAsync<TransportException>(async () => await RecordFrames.ReadRequestAsync(request, CancellationToken.None));
        var badReply = await Assert.ThrowsExactlyAsync<TransportException>(async () => await RecordFrames.ReadRecordsAsync(reply, 1 << 20, CancellationToken.None));

        Assert.AreEqual(("IT2004", "IT2004"), (badRequest.Code, badReply.Code));
    }

    [TestMethod]
    public void Every_transport_error_is_the_suite_code_of_the_same_meaning()
    {
        var expected = new Dictionary<TransportError, string>
        {
            [TransportError.InvalidSetting] = ErrorCodes.InvalidParameter, [TransportError.MalformedMessage] = ErrorCodes.MalformedMessage,
            [TransportError.BatchTooLarge] = ErrorCodes.BatchTooLarge, [TransportError.FrameTooLarge] = ErrorCodes.FrameTooLarge,
            [TransportError.ConnectionFailed] = ErrorCodes.ConnectionFailed, [TransportError.RequestRefused] = ErrorCodes.RequestRefused,
            [TransportError.ConnectionLost] = ErrorCodes.ConnectionLost, [TransportError.PortInUse] = ErrorCodes.PortInUse,
        };

        CollectionAssert.AreEquivalent(Enum.GetValues<TransportError>(), expected.Keys.ToArray());
        foreach (var (error, code) in expected)
            Assert.AreEqual(code, TransportException.CodeOf(error), error.ToString());
    }

    [TestMethod]
    public void Records_are_equal_by_their_values_a_payload_by_its_bytes()
    {
        var records = Awkward();
        var copies = records.Select(r => r with { Payload = r.Payload?.ToArray() }).ToList();
        for (var i = 0; i < records.Count; i++)
        {
            Assert.AreEqual(records[i], copies[i], "another array holding the same bytes");
            Assert.AreEqual(records[i].GetHashCode(), copies[i].GetHashCode());
        }
        // Bytes that differ, NULL against empty, -0.0 against 0.0: not equal.
        Assert.AreNotEqual(records[1], records[1] with { Payload = [0, 255, 2] });
        Assert.AreNotEqual(records[2], records[2] with { Payload = null });
        Assert.AreNotEqual(records[0], records[0] with { Value = 0.0 });
        Assert.AreEqual(2, new HashSet<ServiceRecord>([records[1], copies[1], records[2]]).Count);
    }
}
