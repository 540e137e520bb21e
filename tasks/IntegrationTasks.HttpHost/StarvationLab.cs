using Npgsql;

namespace IntegrationTasks.HttpHost;

/// <summary>
/// Seed 003's two endpoints: each waits 500 ms inside PostgreSQL (pg_sleep), one through the
/// synchronous API (a thread-pool thread blocked for the whole wait), one through the asynchronous
/// API (no thread held while the database waits).
/// </summary>
internal static class StarvationLab
{
    public static void Map(WebApplication app, string connectionString, int minThreads)
    {
        if (minThreads > 0)
            ThreadPool.SetMinThreads(minThreads, minThreads);
        var builder = new NpgsqlConnectionStringBuilder(connectionString) { MaxPoolSize = 1000 };
        var dataSource = NpgsqlDataSource.Create(builder.ConnectionString);
        app.Lifetime.ApplicationStopped.Register(dataSource.Dispose);

        app.MapGet("/starvation/sync", () =>
        {
            using var connection = dataSource.OpenConnection();
            using var command = new NpgsqlCommand("SELECT pg_sleep(0.5)", connection);
            command.ExecuteNonQuery();
            return Microsoft.AspNetCore.Http.Results.Ok();
        });
        app.MapGet("/starvation/async", async (CancellationToken cancellationToken) =>
        {
            await using var connection = await dataSource.OpenConnectionAsync(cancellationToken);
            await using var command = new NpgsqlCommand("SELECT pg_sleep(0.5)", connection);
            await command.ExecuteNonQueryAsync(cancellationToken);
            return Microsoft.AspNetCore.Http.Results.Ok();
        });
    }
}
