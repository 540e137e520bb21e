using Google.Protobuf;
using IntegrationTasks.Grpc.Contract;

namespace IntegrationTasks.Tests;

[TestClass]
[TestCategory("Unit")]
public sealed class RecordMessagesTests
{
    [TestMethod]
    public void Every_field_round_trips_exactly_through_the_protobuf_bytes()
    {
        ServiceRecord[] edges =
        [
            new(1, "", -0.0, new DateTime(2014, 5, 10, 12, 34, 56).AddTicks(1234567), null, ""),
            new(2, "line 1\r\nline 2\ttab", double.Epsilon, DateTime.MinValue, "", null),
            new(3, "São Paulo ✓ 😀 <b>'x'</b> & < >", double.MaxValue, new DateTime(9999, 12, 31, 23, 59, 59).AddTicks(9999999), " trailing ", "\0"),
            new(4, "NaN", double.NaN, new DateTime(1970, 1, 1), null, null),
            new(5, "negative", -1.0000000000000002, new DateTime(1899, 12, 30).AddTicks(1), "x", "y"),
        ];
        foreach (var record in edges.Concat(Enumerable.Range(1, 2000).Select(id => SampleData.Create(id))))
        {
            var back = Record.Parser.ParseFrom(record.ToMessage().ToByteArray()).ToRecord();
            Assert.IsTrue(record.SameValuesAs(back), $"{record} came back as {back}");
            Assert.AreEqual(record.StringField1 is null, back.StringField1 is null, "NULL stays apart from an empty string");
        }
    }
}
