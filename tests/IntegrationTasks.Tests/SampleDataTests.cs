namespace IntegrationTasks.Tests;

[TestClass]
[TestCategory("Unit")]
public sealed class SampleDataTests
{
    [TestMethod]
    public void Rows_depend_only_on_seed_and_id()
    {
        for (var id = 1; id <= 500; id++)
            Assert.IsTrue(SampleData.Create(id, 7).SameValuesAs(SampleData.Create(id, 7)));
        var differing = Enumerable.Range(1, 100).Count(id => !SampleData.Create(id, 7).SameValuesAs(SampleData.Create(id, 8)));
        Assert.IsGreaterThan(90, differing);
    }

    [TestMethod]
    public void Rows_include_the_values_that_break_naive_formats()
    {
        var rows = Enumerable.Range(1, 5000).Select(id => SampleData.Create(id)).ToList();
        Assert.IsTrue(rows.Any(r => r.StringField1 is null) && rows.Any(r => r.StringField2 is null), "NULLs");
        Assert.IsTrue(rows.Any(r => r.StringField1 == "") && rows.Any(r => r.StringField2 == ""), "empty strings");
        Assert.IsTrue(rows.Any(r => r.Desc.Contains('<') && r.Desc.Contains('&') && r.Desc.Contains('"')), "markup and quotes");
        Assert.IsTrue(rows.Any(r => r.Desc.Any(c => c > 127)), "non-ASCII");
        Assert.IsTrue(rows.Any(r => r.StringField1?.Contains("\r\n") == true), "line breaks");
        Assert.IsTrue(rows.Any(r => r.Value != Math.Floor(r.Value)), "fractional doubles");
        Assert.IsTrue(rows.Any(r => Math.Abs(r.Value) > 1e300), "huge doubles");
        Assert.IsTrue(rows.Any(r => r.Value == double.Epsilon), "subnormal doubles");
        Assert.IsTrue(rows.Any(r => r.Value < 0), "negative doubles");
        Assert.IsTrue(rows.Any(r => r.CreationDate.Hour >= 13 && r.CreationDate.Millisecond > 0), "afternoon timestamps with milliseconds");
        Assert.IsTrue(rows.All(r => r.Desc.Length <= RecordTable.StringLength && (r.StringField1?.Length ?? 0) <= RecordTable.StringLength));
    }
}
