namespace IntegrationTasks.Tests;

/// <summary>Rows that went through a codec and came back: the same count, the same values, a NULL payload still NULL.</summary>
internal static class RowChecks
{
    public static void AssertSameRows(IReadOnlyList<ServiceRecord> sent, IReadOnlyList<ServiceRecord> received, string codec)
    {
        Assert.HasCount(sent.Count, received, codec);
        for (var i = 0; i < sent.Count; i++)
        {
            Assert.IsTrue(sent[i].SameValuesAs(received[i]), $"{codec}: row {sent[i].Id} ({PayloadShape.Of(sent[i])}) came back as {PayloadShape.Of(received[i])}");
            Assert.AreEqual((sent[i].Payload is null, sent[i].PayloadText is null), (received[i].Payload is null, received[i].PayloadText is null), $"{codec}: row {sent[i].Id}'s payload NULL stays NULL");
        }
    }
}
