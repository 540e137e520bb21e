namespace IntegrationTasks.Tests;

[TestClass]
[TestCategory("Unit")]
public sealed class RestProtocolTests
{
    /// <summary>The body as RestServer writes it: the source-generated serializer, record by record, into one array.</summary>
    internal static byte[] Body(IEnumerable<ServiceRecord> records)
    {
        var body = new MemoryStream();
        using (var writer = new Utf8JsonWriter(body, RestProtocol.WriterOptions))
        {
            writer.WriteStartArray();
            foreach (var record in records)
                JsonSerializer.Serialize(writer, record, RestJsonContext.Default.ServiceRecord);
            writer.WriteEndArray();
        }
        return body.ToArray();
    }

    private static async Task<List<ServiceRecord>> ReadAsync(Stream body)
    {
        var records = new List<ServiceRecord>();
        await foreach (var record in RestProtocol.ReadRecordsAsync(body, CancellationToken.None))
            records.Add(record);
        return records;
    }

    [TestMethod]
    public async Task Every_field_round_trips_exactly_through_the_JSON_the_client_reads_in_small_pieces()
    {
        ServiceRecord[] edges =
        [
            new(1, "", -0.0, new DateTime(2014, 5, 10, 12, 34, 56).AddTicks(1234567), null, ""),
            new(2, "line 1\r\nline 2\ttab \u0001\u001f", double.Epsilon, DateTime.MinValue, "", null),
            new(3, "São Paulo ✓ 😀 <b>'x'</b> & < > \"q\" \\", double.MaxValue, new DateTime(9999, 12, 31, 23, 59, 59).AddTicks(9999999), " trailing ", "\0"),
            new(5, "negative", -1.0000000000000002, new DateTime(1899, 12, 30).AddTicks(1), "x", "y"),
        ];
        ServiceRecord[] sent = [.. edges, .. Enumerable.Range(1, 3000).Select(id => SampleData.Create(id))];
        // A stream that hands out 7 bytes a read: records, strings and numbers split across the reader's buffer refills.
        var received = await ReadAsync(new TrickleStream(Body(sent), 7));
        Assert.HasCount(sent.Length, received);
        for (var i = 0; i < sent.Length; i++)
        {
            Assert.IsTrue(sent[i].SameValuesAs(received[i]), $"{sent[i]} came back as {received[i]}");
            Assert.AreEqual(sent[i].StringField1 is null, received[i].StringField1 is null, "NULL stays apart from an empty string");
        }
    }

    [TestMethod]
    public async Task A_null_in_the_array_is_a_coded_malformed_message_and_a_body_cut_short_a_JSON_error()
    {
        var error = await Assert.ThrowsExactlyAsync<IntegrationException>(() => ReadAsync(new MemoryStream("[null]"u8.ToArray())));
        Assert.AreEqual(ErrorCodes.MalformedMessage, error.Code);
        var whole = Body(Enumerable.Range(1, 3).Select(id => SampleData.Create(id)));
        // RestJson reads a JSON error that ends early as a broken connection, and resumes the batch.
        await Assert.ThrowsAsync<JsonException>(() => ReadAsync(new MemoryStream(whole[..(whole.Length / 2)])));
    }

    private sealed class TrickleStream(byte[] bytes, int piece) : MemoryStream(bytes)
    {
        public override int Read(byte[] buffer, int offset, int count) => base.Read(buffer, offset, Math.Min(count, piece));

        public override ValueTask<int> ReadAsync(Memory<byte> buffer, CancellationToken cancellationToken = default) =>
            base.ReadAsync(buffer[..Math.Min(buffer.Length, piece)], cancellationToken);

        public override Task<int> ReadAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken) =>
            base.ReadAsync(buffer, offset, Math.Min(count, piece), cancellationToken);
    }

    [TestMethod]
    public void A_query_number_is_ASCII_digits_within_int32_and_nothing_else()
    {
        foreach (var (text, expected) in new[] { ("1", 1), ("0", 0), ("0005", 5), ("2147483647", int.MaxValue) })
        {
            Assert.IsTrue(RestProtocol.TryParseWholeNumber(text, out var value), text);
            Assert.AreEqual(expected, value, text);
        }
        foreach (var text in new[] { "5\0", "5\0\0", " 5", "5 ", "+5", "-5", "5.0", "٥", "2147483648", "99999999999", "", null })
            Assert.IsFalse(RestProtocol.TryParseWholeNumber(text, out _), text is null ? "null" : $"'{text}'");
    }

    [TestMethod]
    public void Every_range_of_IDs_up_to_int_MaxValue_is_one_and_none_past_it()
    {
        Assert.IsTrue(RestProtocol.IsIdRange(int.MaxValue, 1));
        Assert.IsTrue(RestProtocol.IsIdRange(int.MaxValue - 9, 10));
        Assert.IsTrue(RestProtocol.IsIdRange(1, int.MaxValue));
        Assert.IsFalse(RestProtocol.IsIdRange(int.MaxValue - 8, 10));
        Assert.IsFalse(RestProtocol.IsIdRange(2, int.MaxValue));
        Assert.IsFalse(RestProtocol.IsIdRange(0, 1));
        Assert.IsFalse(RestProtocol.IsIdRange(1, 0));
    }
}
