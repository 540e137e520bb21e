using Npgsql;

namespace IntegrationTasks.Host.Labs;

/// <summary>
/// The thread-pool starvation article's two endpoints: each waits 500 ms inside PostgreSQL (pg_sleep), one through the
/// synchronous API (a thread-pool thread blocked for the whole wait), one through the asynchronous
/// API (no thread held while the database waits). Arguments: --min-threads; the connection string as the host's (ConnectionString).
/// </summary>
[HostModule("starvation")]
internal sealed class StarvationModule(HostArguments arguments) : IHostModule
{
    private NpgsqlDataSource _dataSource = null!;


    public string Describe() => "ThreadPoolStarvation lab";

    public Task ConfigureAsync(WebApplicationBuilder builder, CancellationToken cancellationToken)
    {
        var minThreads = (int)arguments.Number("--min-threads", 0);
        if (minThreads > 0)
            ThreadPool.SetMinThreads(minThreads, minThreads);
        var connection = new NpgsqlConnectionStringBuilder(arguments.ConnectionString("--starvation-connstring")) { MaxPoolSize = 1000 };
        _dataSource = NpgsqlDataSource.Create(connection.ConnectionString);
        return Task.CompletedTask;
    }

    public void Map(WebApplication app)
    {
        app.Lifetime.ApplicationStopped.Register(_dataSource.Dispose);
        app.MapGet("/starvation/sync", () =>
        {
            using var connection = _dataSource.OpenConnection();
            using var command = new NpgsqlCommand("SELECT pg_sleep(0.5)", connection);
            command.ExecuteNonQuery();
            return Microsoft.AspNetCore.Http.Results.Ok();
        });
        app.MapGet("/starvation/async", async (CancellationToken cancellationToken) =>
        {
            await using var connection = await _dataSource.OpenConnectionAsync(cancellationToken);
            await using var command = new NpgsqlCommand("SELECT pg_sleep(0.5)", connection);
            await command.ExecuteNonQueryAsync(cancellationToken);
            return Microsoft.AspNetCore.Http.Results.Ok();
        });
    }
}
