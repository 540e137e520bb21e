using System.Data;
using System.Data.Common;
using Microsoft.Data.SqlClient;

namespace IntegrationTasks.Data;

/// <summary>
/// SQL Server through Microsoft.Data.SqlClient. Compiled and unit-tested only: no SQL Server can run
/// on this project's machines. Types are chosen to be lossless (nvarchar for non-ASCII text,
/// datetime2(7) where the series' datetime would round to 1/300 s).
/// </summary>
internal sealed class SqlServerDialect : SqlDialect
{
    public override DbConnection CreateConnection(string connectionString) => new SqlConnection(connectionString);

    protected override string IdType => "int";
    protected override string StringType => "nvarchar(200)";
    protected override string DoubleType => "float";
    protected override string DateTimeType => "datetime2(7)";
    public override DbType DateTimeDbType => DbType.DateTime2;
    protected override string BinaryType => "varbinary(max)";
    protected override string TextType => "nvarchar(max)";

    public override string AddPayloadColumnsSql(RecordTable table) =>
        $"ALTER TABLE dbo.{table.Name} ADD Payload {BinaryType} NULL, PayloadText {TextType} NULL";

    protected override string InsertIgnoringExistingSql(RecordTable table, string values) =>
        $"INSERT INTO {table.Name} ({table.ColumnList}) SELECT {values} WHERE NOT EXISTS (SELECT 1 FROM {table.Name} WITH (UPDLOCK, HOLDLOCK) WHERE {table.IdColumn} = @id)";

    public override string CreateTableSql(RecordTable table) =>
        $"IF OBJECT_ID(N'dbo.{table.Name}', N'U') IS NULL CREATE TABLE dbo.{table.Name} ({ColumnDefinitions(table)})";
}
