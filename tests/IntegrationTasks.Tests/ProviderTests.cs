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

[TestClass]
[TestCategory("Unit")]
public sealed class OwnerOnlyDataTests
{
    private const UnixFileMode OwnerReadWrite = UnixFileMode.UserRead | UnixFileMode.UserWrite;
    private const UnixFileMode OwnerFolder = OwnerReadWrite | UnixFileMode.UserExecute;

    [TestMethod]
    [System.Runtime.Versioning.UnsupportedOSPlatform("windows")]
    public async Task A_SQLite_database_the_suite_makes_is_its_owners_alone_and_a_folder_of_the_users_is_left_as_it_is()
    {
        using var folder = new TempDirectory("it-owner-only-");
        File.SetUnixFileMode(folder, OwnerFolder | UnixFileMode.GroupRead | UnixFileMode.GroupExecute | UnixFileMode.OtherRead | UnixFileMode.OtherExecute);
        var file = Path.Combine(folder, "made", "results.db");
        await using (var connection = await Database.Create(DatabaseProvider.Sqlite, $"Data Source={file}").OpenAsync(CancellationToken.None))
        {
        }

        Assert.AreEqual((OwnerFolder, OwnerReadWrite), (File.GetUnixFileMode(Path.GetDirectoryName(file)!), File.GetUnixFileMode(file)));
        Assert.AreEqual(UnixFileMode.OtherRead, File.GetUnixFileMode(folder) & UnixFileMode.OtherRead, "the user's own folder keeps its mode");
    }

    [TestMethod]
    [System.Runtime.Versioning.UnsupportedOSPlatform("windows")]
    public void A_file_transfer_folder_the_suite_makes_is_its_owners_alone()
    {
        using var folder = new TempDirectory("it-owner-only-");
        var inbox = Path.Combine(folder, "inbox");
        IntegrationTasks.Files.FileExchange.EnsureDirectory(inbox, "InboxFolder");

        Assert.AreEqual(OwnerFolder, File.GetUnixFileMode(inbox));
    }
}
