namespace IntegrationTasks.Tests;

[TestClass]
[TestCategory("Unit")]
public sealed class ProviderTests
{
    [TestMethod]
    [DataRow("sqlite", DatabaseProvider.Sqlite)]
    [DataRow("Postgres", DatabaseProvider.PostgreSql)]
    [DataRow("npgsql", DatabaseProvider.PostgreSql)]
    [DataRow("MSSQL", DatabaseProvider.SqlServer)]
    [DataRow("", DatabaseProvider.Sqlite)]
    public void Provider_names_are_forgiving(string name, DatabaseProvider expected) =>
        Assert.AreEqual(expected, DatabaseProviders.Parse(name));

    [TestMethod]
    public void The_SQL_Server_schema_is_lossless_and_passwords_stay_out_of_messages()
    {
        var database = Database.Create(DatabaseProvider.SqlServer, "Server=db;Database=IntegrationTests;User Id=sa;Password=s3cret");
        var ddl = database.Dialect.CreateTableSql(RecordTable.Client);
        StringAssert.StartsWith(ddl, "IF OBJECT_ID(N'dbo.ClientTable', N'U') IS NULL CREATE TABLE dbo.ClientTable (");
        StringAssert.Contains(ddl, "DescClientTable nvarchar(200) NOT NULL");
        StringAssert.Contains(ddl, "CreationDate datetime2(7) NOT NULL");
        StringAssert.Contains(ddl, "StringField2 nvarchar(200) NULL");
        Assert.DoesNotContain("s3cret", database.Describe());
    }
}
