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

[TestClass]
[TestCategory("Unit")]
public sealed class ConnectionDescriptionTests
{
    [TestMethod]
    [DataRow(DatabaseProvider.PostgreSql, "Host=db;Port=5433;Database=d;Username=u;Password=p1;PSW=p2;SSL Password=p3;SSL Key=/k;Include Error Detail=true",
        "host=db;port=5433;database=d;username=u")]
    [DataRow(DatabaseProvider.SqlServer, "Server=db;Initial Catalog=c;User Id=sa;Pwd=p1;Password=p2", "server=db;initial catalog=c;user id=sa")]
    [DataRow(DatabaseProvider.Sqlite, "Data Source=/a/b.db;Mode=ReadWriteCreate;Password=p1", "data source=/a/b.db;mode=ReadWriteCreate")]
    public void A_connection_is_described_by_where_it_leads_alone(DatabaseProvider provider, string connectionString, string described) =>
        Assert.AreEqual(described, Database.Create(provider, connectionString).Describe());
}
