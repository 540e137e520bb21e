using System.Reflection;

namespace IntegrationTasks.Tests;

/// <summary>
/// The rows of a test that runs a family's two clients (its bool parameter: the second variant or not) on each database: SQLite and
/// PostgreSQL, in that order, the bool first.
/// </summary>
[AttributeUsage(AttributeTargets.Method)]
internal sealed class EachVariantOnEachDatabaseAttribute : Attribute, ITestDataSource
{
    private static readonly object[][] Rows = [[false, "Sqlite"], [true, "Sqlite"], [false, "PostgreSql"], [true, "PostgreSql"]];

    public IEnumerable<object?[]> GetData(MethodInfo methodInfo) => Rows;

    public string? GetDisplayName(MethodInfo methodInfo, object?[]? data) => $"{methodInfo.Name} ({string.Join(", ", data ?? [])})";
}
