namespace IntegrationTasks.Data;

public enum DatabaseProvider
{
    Sqlite,
    PostgreSql,
    SqlServer,
    MariaDb,
}

public static class DatabaseProviders
{
    /// <summary>Accepts the names a user would type: Sqlite, PostgreSql/Postgres/Npgsql, SqlServer/MSSQL, MariaDb/MySql.</summary>
    public static DatabaseProvider Parse(string? name) =>
        (name ?? "").Trim().ToLowerInvariant() switch
        {
            "" or "sqlite" => DatabaseProvider.Sqlite,
            "postgresql" or "postgres" or "npgsql" or "pg" => DatabaseProvider.PostgreSql,
            "sqlserver" or "mssql" or "sqlclient" => DatabaseProvider.SqlServer,
            "mariadb" or "mysql" => DatabaseProvider.MariaDb,
            _ => throw new IntegrationException(ErrorCodes.UnknownProvider,
                $"Unknown database provider '{name}'. Use Sqlite, PostgreSql, MariaDb or SqlServer."),
        };
}
