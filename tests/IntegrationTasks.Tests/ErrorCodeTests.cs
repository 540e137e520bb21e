namespace IntegrationTasks.Tests;

[TestClass]
[TestCategory("Unit")]
public sealed class ErrorCodeTests
{
    private static readonly (string Name, string Code)[] Codes = typeof(ErrorCodes)
        .GetFields(System.Reflection.BindingFlags.Public | System.Reflection.BindingFlags.Static)
        .Where(f => f.IsLiteral).Select(f => (f.Name, (string)f.GetRawConstantValue()!)).ToArray();

    [TestMethod]
    public void Every_code_has_one_meaning()
    {
        Assert.IsGreaterThan(20, Codes.Length);
        var shared = Codes.GroupBy(c => c.Code).Where(g => g.Count() > 1).Select(g => $"{g.Key}: {string.Join(", ", g.Select(c => c.Name))}").ToList();
        Assert.IsEmpty(shared, string.Join("; ", shared));
        Assert.IsTrue(Codes.All(c => System.Text.RegularExpressions.Regex.IsMatch(c.Code, @"^IT\d{4}$")));
    }

    [TestMethod]
    public void Every_code_is_documented_in_docs_errors_md_with_its_name()
    {
        var rows = File.ReadAllLines(Path.Combine(RepositoryPaths.Root, "docs", "errors.md")).Where(l => l.StartsWith("| IT", StringComparison.Ordinal)).ToList();
        foreach (var (name, code) in Codes)
            Assert.IsTrue(rows.Any(r => r.StartsWith($"| {code} | {name} |", StringComparison.Ordinal)), $"{code} {name} is not in docs/errors.md");
        Assert.HasCount(Codes.Length, rows, "docs/errors.md lists a code that ErrorCodes does not have");
    }
}
