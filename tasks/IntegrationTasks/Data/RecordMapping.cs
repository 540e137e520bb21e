using System.Data.Common;

namespace IntegrationTasks.Data;

internal static class RecordMapping
{
    /// <summary>Reads the columns in <see cref="RecordTable.ColumnList"/> order.</summary>
    public static ServiceRecord Read(DbDataReader reader) => new(
        reader.GetInt32(0),
        reader.GetString(1),
        reader.GetDouble(2),
        reader.GetDateTime(3),
        reader.IsDBNull(4) ? null : reader.GetString(4),
        reader.IsDBNull(5) ? null : reader.GetString(5),
        reader.IsDBNull(6) ? null : reader.GetFieldValue<byte[]>(6),
        reader.IsDBNull(7) ? null : reader.GetString(7));
}
